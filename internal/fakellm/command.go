package fakellm

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Main is the command sett-fake-llm: it serves a Server until ctx is done
// and returns the exit code (0 after a clean shutdown, 1 on an error, 2 on
// bad flags). Flags default to FAKELLM_* variables:
//
//	--addr ADDR        listen address (FAKELLM_ADDR, default :8080)
//	--addr-file FILE   write the bound address there once listening (for --addr 127.0.0.1:0)
//	--script FILE      JSON Script (FAKELLM_SCRIPT); default DemoScript
//	--faults JSON      faults injected before the script's own (FAKELLM_FAULTS)
//	--api-key KEY      require this key (FAKELLM_API_KEY)
//	--model NAME       the model answers claim (FAKELLM_MODEL)
//	--journal FILE     append every Record as a JSON line (FAKELLM_JOURNAL)
//	--quiet            no log line per request
func Main(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	fs := flag.NewFlagSet("sett-fake-llm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", orDefault(getenv("FAKELLM_ADDR"), ":8080"), "listen address (FAKELLM_ADDR)")
	addrFile := fs.String("addr-file", "", "write the bound address to this file once listening")
	scriptPath := fs.String("script", getenv("FAKELLM_SCRIPT"), "JSON script of rules and faults (FAKELLM_SCRIPT); default: the demo script for agents/llm's templates")
	faults := fs.String("faults", getenv("FAKELLM_FAULTS"), `faults injected before the script's, e.g. [{"status":429,"retry_after":"1","times":2}] (FAKELLM_FAULTS)`)
	apiKey := fs.String("api-key", getenv("FAKELLM_API_KEY"), "require this API key (FAKELLM_API_KEY)")
	model := fs.String("model", getenv("FAKELLM_MODEL"), "model name the answers claim; default: the requested one (FAKELLM_MODEL)")
	journal := fs.String("journal", getenv("FAKELLM_JOURNAL"), "append every request as a JSON line to this file (FAKELLM_JOURNAL)")
	quiet := fs.Bool("quiet", false, "no log line per request")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }

	script := DemoScript()
	if *scriptPath != "" {
		s, err := LoadScript(*scriptPath)
		if err != nil {
			logf("sett-fake-llm: %v", err)
			return 2
		}
		script = s
	}
	if *faults != "" {
		f, err := ParseFaults(*faults)
		if err != nil {
			logf("sett-fake-llm: --faults: %v", err)
			return 2
		}
		script.Faults = append(f, script.Faults...)
	}
	if *apiKey != "" {
		script.APIKey = *apiKey
	}
	if *model != "" {
		script.Model = *model
	}
	srv := New(script)
	if !*quiet {
		srv.SetLogFunc(logf)
	}
	if *journal != "" {
		f, err := os.OpenFile(*journal, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			logf("sett-fake-llm: --journal: %v", err)
			return 1
		}
		defer f.Close()
		srv.SetJournal(f)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		logf("sett-fake-llm: %v", err)
		return 1
	}
	if *addrFile != "" {
		// Written whole before it appears, so a reader never sees half.
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err == nil {
			err = os.Rename(tmp, *addrFile)
		}
		if err != nil {
			logf("sett-fake-llm: --addr-file: %v", err)
			return 1
		}
	}
	logf("sett-fake-llm: listening on %s with %d rule(s) and %d fault(s)", ln.Addr(), len(script.Rules), len(script.Faults))
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		logf("sett-fake-llm: %v", err)
		return 1
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logf("sett-fake-llm: shutdown: %v", err)
		return 1
	}
	return 0
}
