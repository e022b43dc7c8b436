// Package connect finds the Redis and the instance a person means, the
// way the sett command does: from its flags and the environment
// (SETT_REDIS_URL, SETT_INSTANCE and the variables config.ApplyEnv
// reads), the running instance records of the workspace (package
// instance), a compose stack's .env and the services.redis section of the
// workspace's sett.yml. Resolve decides; Target.Dial connects.
//
// The CLI (every command that reads or writes the blackboard) and the
// client API's DialEnv (pkg/blackboard) share it, so a program reaches
// exactly the instance `sett status` run in the same place reaches.
package connect
