package orchestratord

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// TestDebugSwitches: the switches are off by default, the environment
// sets their defaults, a flag overrides the environment, and a variable
// that is no boolean is an error naming it.
func TestDebugSwitches(t *testing.T) {
	tests := []struct {
		name           string
		bidEnv, resEnv string
		args           []string
		wantBid        bool
		wantRes        bool
		wantErr        string
	}{
		{name: "off by default"},
		{name: "from the environment", bidEnv: "true", resEnv: "1", wantBid: true, wantRes: true},
		{name: "a flag", args: []string{"--disable-result-completion"}, wantRes: true},
		{name: "a flag overrides the environment", bidEnv: "true", args: []string{"--disable-bid-grants=false"}},
		{name: "not a boolean", bidEnv: "yes please", wantErr: `SETT_DISABLE_BID_GRANTS="yes please": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envDisableBidGrants, tt.bidEnv)
			t.Setenv(envDisableResultCompletion, tt.resEnv)
			fs := flag.NewFlagSet("orchestrator", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			d, err := registerDebugSwitches(fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if *d.noBidGrants != tt.wantBid || *d.noResultCompletion != tt.wantRes {
				t.Errorf("bid grants off %v, result completion off %v; want %v, %v",
					*d.noBidGrants, *d.noResultCompletion, tt.wantBid, tt.wantRes)
			}
		})
	}
}
