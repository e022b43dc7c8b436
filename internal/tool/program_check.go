package tool

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// checkProgram says, before the start, why the program at path (as
// lookPath found it; relative to dir when not absolute) cannot be
// started, in the words an agent's author acts on: "permission denied:
// agents/hello/hello.sh is not executable (chmod +x agents/hello/hello.sh)".
// It returns nil when the program looks startable; the start itself still
// reports what this check cannot see. It exists because a sandboxed start
// only reports an exit status, and because the kernel's "no such file or
// directory" for a script whose interpreter is missing names the script,
// not the interpreter.
func checkProgram(path, dir string) error {
	if dir != "" {
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			return fmt.Errorf("working directory %s: %w", dir, unwrapPathError(err))
		case !fi.IsDir():
			return fmt.Errorf("working directory %s is not a directory", dir)
		}
	}
	full := path
	if !filepath.IsAbs(full) && dir != "" {
		full = filepath.Join(dir, full)
	}
	fi, err := os.Stat(full)
	switch {
	case os.IsNotExist(err):
		return fmt.Errorf("no such file or directory: %s does not exist%s", path, inDir(path, dir))
	case err != nil:
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, not a program", path)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("permission denied: %s is not executable (chmod +x %s)", path, path)
	}
	interp, err := shebang(full)
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if interp == "" || !filepath.IsAbs(interp) {
		return nil
	}
	ifi, err := os.Stat(interp)
	switch {
	case err != nil:
		return fmt.Errorf("bad interpreter: %s starts with #!%s, which does not exist here", path, interp)
	case ifi.IsDir() || ifi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("bad interpreter: %s starts with #!%s, which is not an executable file", path, interp)
	}
	return nil
}

// shebang returns the interpreter a script's "#!" line names, "" when the
// file does not start with one.
func shebang(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	rest, ok := bytes.CutPrefix(line, []byte("#!"))
	if !ok {
		return "", nil
	}
	fields := strings.Fields(string(rest))
	if len(fields) == 0 {
		return "", nil
	}
	return fields[0], nil
}

func inDir(path, dir string) string {
	if filepath.IsAbs(path) || dir == "" {
		return ""
	}
	return " in " + dir
}

// unwrapPathError returns the system error inside a *os.PathError, whose
// path the caller names itself.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
