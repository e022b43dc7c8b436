package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelSet is a Sentinel-managed deployment of real processes: a master
// (AOF everysec, like production), one replica and one sentinel
// (redis-server --sentinel) that promotes the replica when the master dies.
type SentinelSet struct {
	MasterName string
	// Password is the data nodes' password; SentinelPassword the
	// sentinel's own.
	Password         string
	SentinelPassword string
	Master           *Server
	Replica          *Server
	Sentinel         *Server
}

// NewSentinelSet starts the master, the replica and the sentinel and waits
// until the replica is in sync and the sentinel knows it. The caller must
// Stop it.
func NewSentinelSet(password, sentinelPassword string) (*SentinelSet, error) {
	return NewSentinelSetDetecting(password, sentinelPassword, time.Second)
}

// NewSentinelSetDetecting is NewSentinelSet with the sentinel's
// down-after-milliseconds: how long the master must not answer before
// the sentinel starts a failover (a managed service's detection time).
func NewSentinelSetDetecting(password, sentinelPassword string, downAfter time.Duration) (*SentinelSet, error) {
	return NewSentinelSetOn("", password, sentinelPassword, downAfter)
}

// NewSentinelSetOn is NewSentinelSetDetecting with every process bound
// to host (see ServerOptions.Host) and announcing it, so that what the
// sentinel hands out after a failover is an address clients on host's
// network reach; "" is loopback.
func NewSentinelSetOn(host, password, sentinelPassword string, downAfter time.Duration) (*SentinelSet, error) {
	// A master name of its own: sentinels gossip master configurations by
	// name (hello messages on every instance they monitor), so two sets
	// of parallel tests naming the same master could take each other's
	// failovers once a killed server's port is reused by the other set:
	// the daemons then follow a foreign master holding none of their keys.
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return nil, fmt.Errorf("redistest: master name: %w", err)
	}
	s := &SentinelSet{MasterName: "sett-master-" + hex.EncodeToString(suffix[:]), Password: password, SentinelPassword: sentinelPassword}
	var err error
	common := []string{"masterauth " + password, "repl-diskless-sync yes", "repl-diskless-sync-delay 0"}
	var sentinelAnnounce []string
	if host != "" {
		common = append(common, "replica-announce-ip "+host)
		sentinelAnnounce = []string{"sentinel announce-ip " + host}
	}
	if s.Master, err = NewServer(ServerOptions{Password: password, AppendOnly: true, AppendFsync: "everysec", Extra: common, Host: host}); err != nil {
		return nil, err
	}
	mhost, port := hostPort(s.Master.Addr)
	if s.Replica, err = NewServer(ServerOptions{Password: password, AppendOnly: true, AppendFsync: "everysec", Host: host,
		Extra: append(common, "replicaof "+mhost+" "+port)}); err != nil {
		s.Stop()
		return nil, err
	}
	if s.Sentinel, err = NewServer(ServerOptions{Password: sentinelPassword, Sentinel: true, Host: host, Extra: append([]string{
		fmt.Sprintf("sentinel monitor %s %s %s 1", s.MasterName, mhost, port),
		fmt.Sprintf("sentinel auth-pass %s %s", s.MasterName, password),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", s.MasterName, downAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s 10000", s.MasterName),
	}, sentinelAnnounce...)}); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.waitReplicaKnown(30 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// waitReplicaKnown polls until the sentinel lists a replica in sync.
func (s *SentinelSet) waitReplicaKnown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	sc := s.SentinelClient()
	defer sc.Close()
	for {
		reps, err := sc.Replicas(ctx, s.MasterName).Result()
		if err == nil && len(reps) > 0 && reps[0]["flags"] == "slave" && reps[0]["master-link-status"] == "ok" {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("redistest: sentinel does not see a replica in sync after %s: %v %v", timeout, reps, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// SentinelClient talks to the sentinel itself; the caller closes it.
func (s *SentinelSet) SentinelClient() *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: s.Sentinel.Addr, Password: s.SentinelPassword})
}

// MasterAddr asks the sentinel which node is the master now.
func (s *SentinelSet) MasterAddr(ctx context.Context) (string, error) {
	sc := s.SentinelClient()
	defer sc.Close()
	a, err := sc.GetMasterAddrByName(ctx, s.MasterName).Result()
	if err != nil {
		return "", err
	}
	return a[0] + ":" + a[1], nil
}

// Stop kills every process and removes their data.
func (s *SentinelSet) Stop() {
	for _, srv := range []*Server{s.Sentinel, s.Replica, s.Master} {
		if srv != nil {
			srv.Stop()
		}
	}
}
