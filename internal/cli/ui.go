package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/console"
	"github.com/settdev/sett/internal/instance"
)

// uiOptions are the flags of `sett ui`.
type uiOptions struct {
	listen      string
	token       string
	readOnly    bool
	basePath    string
	trustHeader string
	by          string
	healthcheck bool
}

func newUICmd(app *App) *cobra.Command {
	var o uiOptions
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web console: live workflows, provenance graphs, approvals, control",
		Long: `Serve a web console for the instance (found and connected to as every other
command does): a live list of workflows, each workflow's provenance graph,
timeline, version diffs and memories, the approvals inbox and the control
page (pause, resume, cancel, retry, queue, agents, dead letters, learnings).

It listens on loopback only unless --listen says otherwise, and every request
needs the access token: a random one is made at start (or give --token, env
SETT_UI_TOKEN) and printed as part of the URL. --read-only hides and refuses
every action. Behind a reverse proxy, --base-path serves it under a sub-path
and --trusted-user-header records the proxy's authenticated user as who
decided (off by default: set it only when every request goes through that
proxy).`,
		Example: `  sett ui
  sett ui --read-only
  sett ui --listen 0.0.0.0:7070 --base-path /sett --trusted-user-header X-Forwarded-User`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUI(cmd, app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:7070", "address to listen on (loopback by default; another host makes the console reachable from the network)")
	f.StringVar(&o.token, "token", "", "access token (default: env SETT_UI_TOKEN, else a random one printed in the URL)")
	f.BoolVar(&o.readOnly, "read-only", false, "hide and refuse every action (approvals, pause, cancel, retry)")
	f.StringVar(&o.basePath, "base-path", "", "serve under this sub-path of a reverse proxy, e.g. /sett")
	f.StringVar(&o.trustHeader, "trusted-user-header", "", "header an authenticating proxy sets to the user name, recorded as who decided (off by default)")
	f.StringVar(&o.by, "by", "", "who decides when no trusted header names someone (default: $USER)")
	f.BoolVar(&o.healthcheck, "healthcheck", false, "check that a console serves on --listen instead of serving one (a container healthcheck): exit 0 when it answers")
	return cmd
}

func runUI(cmd *cobra.Command, app *App, o uiOptions) error {
	ctx := cmd.Context()
	if o.healthcheck {
		return uiHealthcheck(ctx, o.listen, o.basePath)
	}
	token := o.token
	if token == "" {
		token = app.env("SETT_UI_TOKEN")
	}
	if token == "" {
		var b [24]byte
		if _, err := rand.Read(b[:]); err != nil {
			return err
		}
		token = hex.EncodeToString(b[:])
	}
	if len(token) < 16 {
		return usageError("--token must be at least 16 characters (omit it for a random one)")
	}
	// Pages read as the instance's read-only user and actions write as
	// the people's user, when the runtime created ACL users (the same
	// Redis user otherwise); a read-only console holds no writer at all.
	return app.withBlackboardAs(ctx, instance.AccessReader, func(bb *blackboard.Client) error {
		var wb *blackboard.Client
		if !o.readOnly {
			var err error
			if wb, _, err = app.ConnectAs(ctx, instance.AccessHuman); err != nil {
				return err
			}
			defer wb.Close()
		}
		h, err := console.New(console.Options{Client: bb, Writer: wb, Token: token, ReadOnly: o.readOnly, BasePath: o.basePath,
			TrustedUserHeader: o.trustHeader, Actor: decider(app, o.by), Logger: zerolog.New(app.Err).With().Timestamp().Logger()})
		if err != nil {
			if errors.Is(err, console.ErrOptions) {
				return usageError("%v", err)
			}
			return err
		}
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			return fmt.Errorf("cannot listen on %s: %w (choose another with --listen)", o.listen, err)
		}
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: strings.TrimRight(o.basePath, "/") + "/",
			RawQuery: url.Values{"token": {token}}.Encode()}
		out := cmd.OutOrStdout()
		fmt.Fprintf(out, "Sett console for instance %s: %s\n", bb.Instance(), u.String())
		if ip := net.ParseIP(strings.Trim(strings.Split(o.listen, ":")[0], "[]")); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(out, "Listening on %s: reachable from the network; anyone with the URL can %s.\n", o.listen,
				map[bool]string{true: "read", false: "decide and control"}[o.readOnly])
		}
		if o.readOnly {
			fmt.Fprintln(out, "Read-only: no action is offered or accepted.")
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// Event streams never end on their own: close them after the grace.
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		return nil
	})
}
