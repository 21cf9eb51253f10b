package bpfprog

import (
	"encoding/json"
	"testing"
)

// TestAddrJSON: an address is a JSON string of lowercase hex after 0x,
// read back as written (show --json's ksymbol addr), and nothing else.
func TestAddrJSON(t *testing.T) {
	for _, c := range []struct {
		addr Addr
		json string
	}{{0, `"0x0"`}, {0xffffffffc0248588, `"0xffffffffc0248588"`}, {1<<64 - 1, `"0xffffffffffffffff"`}} {
		b, err := json.Marshal(c.addr)
		if err != nil || string(b) != c.json {
			t.Errorf("Marshal(%#x) = %s, %v; want %s", uint64(c.addr), b, err, c.json)
		}
		var a Addr
		if err := json.Unmarshal([]byte(c.json), &a); err != nil || a != c.addr {
			t.Errorf("Unmarshal(%s) = %#x, %v; want %#x", c.json, uint64(a), err, uint64(c.addr))
		}
	}
	for _, bad := range []string{`"ffff"`, `"0x"`, `"0xg"`, `"0x10000000000000000"`, `12`} {
		var a Addr
		if err := json.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("Unmarshal(%s) = %#x, want an error", bad, uint64(a))
		}
	}
}
