// Package redisconn turns the services.redis settings of sett.yml into a
// blackboard.Conn: it picks the topology (one node, Sentinel, Cluster),
// loads the TLS files and carries the ACL user. It is the one place where
// configuration meets connection details, so the daemons, the CLI and the
// runtimes reach Redis the same way.
package redisconn
