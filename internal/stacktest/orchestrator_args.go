package stacktest

import "fmt"

// StartOrchestratorArgs starts an orchestrator like StartOrchestrator with
// extra command-line flags after the defaults (a repeated flag overrides
// the default: "--leader-ttl", "1h").
func (s *Stack) StartOrchestratorArgs(extra ...string) *Proc {
	name := "orchestrator"
	if n := s.count("orchestrator"); n > 0 {
		name = fmt.Sprintf("orchestrator-%d", n+1)
	}
	return s.start(name, append([]string{s.Bin.Orchestrator, "--id", name, "--leader-ttl", "2s"}, extra...), s.baseEnv())
}
