package orchestratord

import (
	"flag"
	"fmt"
	"os"
	"strconv"
)

// debugSwitches are the orchestrator's switches for comparison and
// debugging. They were sett.yml keys (orchestrator.disable_bid_grants,
// orchestrator.disable_result_completion) and are daemon flags now, so
// the file holds only what an instance means to run with.
type debugSwitches struct {
	noBidGrants        *bool
	noResultCompletion *bool
}

// Environment variables that set the debug switches' defaults.
const (
	envDisableBidGrants        = "SETT_DISABLE_BID_GRANTS"
	envDisableResultCompletion = "SETT_DISABLE_RESULT_COMPLETION"
)

// registerDebugSwitches adds the debug switches to fs, with defaults from
// the environment; a variable that is set but not a boolean is an error
// that names it.
func registerDebugSwitches(fs *flag.FlagSet) (debugSwitches, error) {
	bidDef, err := envBool(envDisableBidGrants)
	if err != nil {
		return debugSwitches{}, err
	}
	resDef, err := envBool(envDisableResultCompletion)
	if err != nil {
		return debugSwitches{}, err
	}
	return debugSwitches{
		noBidGrants: fs.Bool("disable-bid-grants", bidDef,
			"decide every grant in the orchestrator: the last expected bid never grants in its own script (for comparison and debugging; env "+envDisableBidGrants+")"),
		noResultCompletion: fs.Bool("disable-result-completion", resDef,
			"complete every claim in the orchestrator: a result never completes its claim in its own script (for comparison and debugging; env "+envDisableResultCompletion+")"),
	}, nil
}

// envBool is the boolean in the environment variable name; false when it
// is unset or empty.
func envBool(name string) (bool, error) {
	v := os.Getenv(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false (1 or 0)", name, v)
	}
	return b, nil
}
