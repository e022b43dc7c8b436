package secretfd

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHelperProcess is the child of TestSecretsArriveOnAPipeNotInTheEnvironment.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("SECRETFD_HELPER") != "1" {
		return
	}
	s, err := Read(os.LookupEnv)
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error())
		os.Exit(1)
	}
	environ, _ := os.ReadFile("/proc/self/environ")
	os.Stdout.WriteString(s["SETT_REDIS_URL"] + "\n" + strings.ReplaceAll(string(environ), "\x00", "\n"))
	os.Exit(0)
}

func TestSecretsArriveOnAPipeNotInTheEnvironment(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = []string{"SECRETFD_HELPER=1"}
	done, err := Attach(cmd, map[string]string{"SETT_REDIS_URL": "redis://:hunter2@127.0.0.1:1/0"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	done()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	got, environ, _ := strings.Cut(string(out), "\n")
	if got != "redis://:hunter2@127.0.0.1:1/0" {
		t.Errorf("child read %q from the pipe", got)
	}
	if strings.Contains(environ, "hunter2") {
		t.Errorf("the secret is in the child's environment: %q", environ)
	}
	if !strings.Contains(environ, EnvVar+"=3") {
		t.Errorf("environ %q lacks %s=3", environ, EnvVar)
	}
}

func TestReadWithoutTheVariableIsNil(t *testing.T) {
	s, err := Read(func(string) (string, bool) { return "", false })
	if s != nil || err != nil {
		t.Errorf("Read = %v, %v", s, err)
	}
	if _, err := Read(func(string) (string, bool) { return "x", true }); err == nil || !strings.Contains(err.Error(), EnvVar) {
		t.Errorf("Read of a bad number: %v", err)
	}
}
