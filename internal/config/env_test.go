package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// envMap is a lookup function over a fixed set of variables.
func envMap(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestApplyEnv(t *testing.T) {
	file := withLines(
		`instance: from-file`,
		`services:`,
		`  redis:`,
		`    url: redis://file:6379`,
		`    password: file-secret`,
		`    hash_tag: true`,
	)
	tests := []struct {
		name         string
		env          map[string]string
		wantInstance string
		wantURL      string
		wantPassword string
		wantHashTag  bool
	}{
		{name: "nothing set keeps the file", env: nil,
			wantInstance: "from-file", wantURL: "redis://file:6379", wantPassword: "file-secret", wantHashTag: true},
		{name: "empty values keep the file", env: map[string]string{EnvInstance: "", EnvRedisURL: "", EnvRedisPassword: "", EnvHashTag: ""},
			wantInstance: "from-file", wantURL: "redis://file:6379", wantPassword: "file-secret", wantHashTag: true},
		{name: "every variable", env: map[string]string{
			EnvInstance: "from-env", EnvRedisURL: "rediss://env:6380/1", EnvRedisPassword: "env secret", EnvHashTag: "false"},
			wantInstance: "from-env", wantURL: "rediss://env:6380/1", wantPassword: "env secret", wantHashTag: false},
		{name: "hash tag 0", env: map[string]string{EnvHashTag: "0"},
			wantInstance: "from-file", wantURL: "redis://file:6379", wantPassword: "file-secret", wantHashTag: false},
		{name: "hash tag FALSE", env: map[string]string{EnvHashTag: "FALSE"},
			wantInstance: "from-file", wantURL: "redis://file:6379", wantPassword: "file-secret", wantHashTag: false},
		{name: "unrelated variables are ignored", env: map[string]string{"SETT_OTHER": "x", "REDIS_URL": "redis://nope:1"},
			wantInstance: "from-file", wantURL: "redis://file:6379", wantPassword: "file-secret", wantHashTag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustParse(t, file)
			if err := cfg.ApplyEnv(envMap(tt.env)); err != nil {
				t.Fatalf("ApplyEnv: %v", err)
			}
			r := cfg.Services.Redis
			if cfg.Instance != tt.wantInstance || r.URL != tt.wantURL || r.Password != tt.wantPassword || r.HashTag != tt.wantHashTag {
				t.Fatalf("got instance %q url %q password %q hash_tag %v; want %q %q %q %v",
					cfg.Instance, r.URL, r.Password, r.HashTag, tt.wantInstance, tt.wantURL, tt.wantPassword, tt.wantHashTag)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("Validate after ApplyEnv: %v", err)
			}
		})
	}
}

func TestApplyEnvHashTagTrue(t *testing.T) {
	tests := []struct {
		name  string
		value string
	}{
		{name: "true", value: "true"},
		{name: "1", value: "1"},
		{name: "True", value: "True"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustParse(t, withLines())
			if err := cfg.ApplyEnv(envMap(map[string]string{EnvHashTag: tt.value})); err != nil {
				t.Fatalf("ApplyEnv: %v", err)
			}
			if !cfg.Services.Redis.HashTag {
				t.Fatalf("%s=%s left hash_tag false", EnvHashTag, tt.value)
			}
		})
	}
}

func TestApplyEnvErrors(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		wantMsgs []string
		notInMsg string
	}{
		{name: "bad hash tag", env: map[string]string{EnvHashTag: "yes"},
			wantMsgs: []string{`config: invalid environment variable SETT_HASH_TAG: "yes" is not a boolean (use true, false, 1 or 0)`}},
		{name: "bad instance", env: map[string]string{EnvInstance: "My Instance"},
			wantMsgs: []string{`config: invalid environment variable SETT_INSTANCE: "My Instance" is not a valid instance name`}},
		{name: "bad url scheme hides the password", env: map[string]string{EnvRedisURL: "http://user:topsecret@host:6379"},
			wantMsgs: []string{`config: invalid environment variable SETT_REDIS_URL: "http://user:xxxxx@host:6379" has scheme "http"`},
			notInMsg: "topsecret"},
		{name: "unparsable url hides the password", env: map[string]string{EnvRedisURL: "redis://user:topsecret@[::1"},
			wantMsgs: []string{`config: invalid environment variable SETT_REDIS_URL: not a valid URL`},
			notInMsg: "topsecret"},
		{name: "every problem at once", env: map[string]string{EnvInstance: "-x", EnvRedisURL: "redis://", EnvHashTag: "maybe"},
			wantMsgs: []string{"SETT_INSTANCE: ", "SETT_REDIS_URL: ", "SETT_HASH_TAG: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustParse(t, withLines(`instance: keep`))
			before := *cfg
			err := cfg.ApplyEnv(envMap(tt.env))
			if !errors.Is(err, ErrEnv) {
				t.Fatalf("ApplyEnv error = %v, want ErrEnv", err)
			}
			for _, want := range tt.wantMsgs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error:\n%s\nwant it to contain %s", err, want)
				}
			}
			if tt.notInMsg != "" && strings.Contains(err.Error(), tt.notInMsg) {
				t.Errorf("error repeats a secret: %s", err)
			}
			if cfg.Instance != before.Instance || !reflect.DeepEqual(cfg.Services.Redis, before.Services.Redis) {
				t.Errorf("a failed ApplyEnv changed the Config")
			}
		})
	}
}

func TestApplyEnvNilLookup(t *testing.T) {
	cfg, _ := mustParse(t, withLines(`instance: keep`))
	if err := cfg.ApplyEnv(nil); err != nil {
		t.Fatalf("ApplyEnv(nil): %v", err)
	}
	if cfg.Instance != "keep" {
		t.Fatalf("ApplyEnv(nil) changed instance to %q", cfg.Instance)
	}
}

func TestApplyEnvForgetsFileLine(t *testing.T) {
	// After an override, messages about the value must not point at the
	// file's line, which no longer holds it.
	cfg, _ := mustParse(t, withLines(`instance: from-file`))
	if err := cfg.ApplyEnv(envMap(map[string]string{EnvInstance: "from-env"})); err != nil {
		t.Fatal(err)
	}
	cfg.Instance = "Broken By A Flag"
	fe := findFieldError(t, cfg.Validate(), "instance")
	if fe.Line != 0 {
		t.Fatalf("Line = %d, want 0 after the environment replaced the value", fe.Line)
	}
}
