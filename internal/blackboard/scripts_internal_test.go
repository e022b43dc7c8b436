package blackboard

import (
	"strings"
	"testing"
)

func TestTryFunctions(t *testing.T) {
	for _, tc := range []struct {
		user string
		want bool
	}{
		{"", true},
		{"default", true},
		{"sett-demo-cub-coder", false},
		{"sett-demo-orchestrator", false},
		{"admin", false},
	} {
		if got := tryFunctions(tc.user); got != tc.want {
			t.Errorf("tryFunctions(%q) = %v, want %v", tc.user, got, tc.want)
		}
	}
}

func TestIsNoScript(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{reply("NOSCRIPT No matching script. Please use EVAL."), true},
		{reply("ERR Function not found"), true},
		{reply("ERR unknown command 'FCALL'"), false},
		{reply("NOPERM User sett has no permissions to run the 'fcall' command"), false},
		{ErrStaleGrant, false},
	} {
		if got := isNoScript(tc.err); got != tc.want {
			t.Errorf("isNoScript(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// The library's name names its text: the same scripts give the same name,
// a changed set another one, so two Sett versions never share a name.
func TestLibraryNameFollowsTheScripts(t *testing.T) {
	s, err := loadScriptSet(true)
	if err != nil {
		t.Fatal(err)
	}
	again, err := libraryName(s.names())
	if err != nil {
		t.Fatal(err)
	}
	if again != s.library || !strings.HasPrefix(s.library, "sett_") || len(s.library) != len("sett_")+16 {
		t.Fatalf("library %q, again %q: want one stable sett_<16 hex> name", s.library, again)
	}
	fewer, err := libraryName(s.names()[1:])
	if err != nil {
		t.Fatal(err)
	}
	if fewer == s.library {
		t.Fatalf("a library without %s has the same name %q", s.names()[0], fewer)
	}
	text, err := libraryText(s.library, s.names())
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range s.all() {
		if sc.fn != s.library+"_"+sc.name || !strings.Contains(text, "function_name = '"+sc.fn+"'") {
			t.Errorf("script %s: function %q not registered in the library", sc.name, sc.fn)
		}
	}
	if !strings.Contains(text, "function_name = '"+s.purgeWorkflow.fn+"', flags = {'allow-oom'}") {
		t.Errorf("purge_workflow is not registered with allow-oom")
	}
}
