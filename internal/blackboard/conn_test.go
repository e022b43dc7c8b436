package blackboard

import (
	"context"
	"crypto/tls"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// crc16 is the XMODEM CRC Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for j := 0; j < 8; j++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// slot is the cluster slot of a key, honouring {hash tags}.
func slot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return crc16(key) % 16384
}

// TestHashTaggedKeysShareOneSlot calls every Keys method (every key and
// channel a script or a pipeline can touch) and checks that, with hash
// tags, all of them land in the instance's one cluster slot.
func TestHashTaggedKeysShareOneSlot(t *testing.T) {
	if got := crc16("123456789"); got != 0x31C3 {
		t.Fatalf("crc16 self-check = %#x, want 0x31c3", got)
	}
	k := NewKeys("prod-1", true)
	want := slot("sett:{prod-1}:x")
	v := reflect.ValueOf(k)
	n := 0
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		ft := m.Type
		if ft.NumOut() != 1 || ft.Out(0).Kind() != reflect.String {
			continue
		}
		args := []reflect.Value{v}
		for a := 1; a < ft.NumIn(); a++ {
			args = append(args, reflect.ValueOf("id-{weird}-"+string(rune('a'+a))))
		}
		key := m.Func.Call(args)[0].String()
		if got := slot(key); got != want {
			t.Errorf("%s() = %q in slot %d, want %d", m.Name, key, got, want)
		}
		n++
	}
	if n < 30 {
		t.Fatalf("checked only %d key helpers", n)
	}
}

func TestConnTopologyAndRefusals(t *testing.T) {
	tests := []struct {
		name    string
		conn    Conn
		opts    Options
		wantErr string
	}{
		{name: "nothing", conn: Conn{}, wantErr: "set exactly one"},
		{name: "two topologies", conn: Conn{URL: "redis://x:1", ClusterAddrs: []string{"a:1"}}, wantErr: "set exactly one"},
		{name: "cluster without hash tag", conn: Conn{ClusterAddrs: []string{"a:1"}}, wantErr: "hash_tag"},
		{name: "sentinel without master", conn: Conn{Sentinel: &SentinelConn{Addrs: []string{"a:1"}}}, wantErr: "master_name"},
		{name: "sentinel without addresses", conn: Conn{Sentinel: &SentinelConn{MasterName: "m"}}, wantErr: "sentinel addresses"},
		{name: "skip_verify in url", conn: Conn{URL: "rediss://:secret@x:1/0?skip_verify=true"}, wantErr: "skip_verify"},
		{name: "tls with redis url", conn: Conn{URL: "redis://x:1/0", TLS: &tls.Config{}}, wantErr: "rediss://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Instance = "i"
			_, err := DialConn(context.Background(), tt.conn, tt.opts)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrInvalid mentioning %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error repeats the password: %v", err)
			}
		})
	}
}
