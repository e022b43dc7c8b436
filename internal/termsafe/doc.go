// Package termsafe makes untrusted text safe to print on a terminal.
//
// Payloads, goal text, summaries and reasons come from tools, models and
// users. Printed raw, an escape sequence in them can clear the screen, move
// the cursor over earlier output, set the window title or write the
// clipboard (OSC 52), and a bidirectional override can make text read
// differently from what it is. Every human-readable output of the CLI runs
// such text through String or Line; machine formats (JSON) stay exact and
// never pass through here.
package termsafe
