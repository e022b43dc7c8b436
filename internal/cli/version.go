package cli

import (
	"fmt"
	goruntime "runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what `sett version` prints; also its JSON form.
type versionInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	// Modified is true when the binary was built from a tree with
	// uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// currentVersion is Version (set by the Makefile), else the module
// version `go install` recorded, with the commit the binary was built
// from when the build recorded it.
func currentVersion() versionInfo {
	v := versionInfo{Version: Version, Go: goruntime.Version(), Platform: goruntime.GOOS + "/" + goruntime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String renders the version in one line: "sett v0.3.0 (commit 1a2b3c4d,
// go1.26.0, linux/amd64)".
func (v versionInfo) String() string {
	s := "sett " + v.Version + " ("
	if v.Commit != "" {
		s += "commit " + v.Commit[:min(len(v.Commit), 8)]
		if v.Modified {
			s += "+changes"
		}
		s += ", "
	}
	return s + v.Go + ", " + v.Platform + ")"
}

func newVersionCmd(app *App) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "version [-o text|json]",
		Short: "Print the version of sett (also: sett --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			v := currentVersion()
			if format == "json" {
				return writeJSONIndent(cmd.OutOrStdout(), v)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), v)
			return err
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text or json")
	return cmd
}
