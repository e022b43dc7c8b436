package observability

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// LogFormat selects how log lines are written.
type LogFormat string

// Log formats. Auto picks console on a terminal and JSON otherwise.
const (
	LogAuto    LogFormat = "auto"
	LogJSON    LogFormat = "json"
	LogConsole LogFormat = "console"
)

// setTimeFormat sets zerolog's process-wide time format once: loggers may
// be built concurrently (tests do).
var setTimeFormat sync.Once

// NewLogger builds the root logger for a daemon: JSON with millisecond
// timestamps (stable snake_case fields), or human console output
// when format is console or auto on a TTY. level is a zerolog level name
// ("debug", "info", ...). The logger carries component and instance; with
// component empty it carries no component, for a daemon whose services
// each add their own (zerolog appends a field added twice, and JSON
// parsers keep only the last).
func NewLogger(out io.Writer, format LogFormat, level, component, instance string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("observability: log level %q is not one of trace, debug, info, warn, error", level)
	}
	setTimeFormat.Do(func() { zerolog.TimeFieldFormat = time.RFC3339Nano })
	w := out
	switch format {
	case LogConsole:
		w = zerolog.ConsoleWriter{Out: out, TimeFormat: "15:04:05.000"}
	case LogAuto, "":
		if f, ok := out.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			w = zerolog.ConsoleWriter{Out: out, TimeFormat: "15:04:05.000"}
		}
	case LogJSON:
	default:
		return zerolog.Nop(), fmt.Errorf("observability: log format %q is not one of auto, json, console", format)
	}
	ctx := zerolog.New(w).Level(lvl).With().Timestamp()
	if component != "" {
		ctx = ctx.Str("component", component)
	}
	if instance != "" {
		ctx = ctx.Str("instance", instance)
	}
	return ctx.Logger(), nil
}
