package bpfprog

import (
	"encoding/json"
	"testing"
	"time"
)

// TestDocuments pins the head of the documents bpfmeta writes: the
// version and kind first, then what the kind has (README, "JSON").
func TestDocuments(t *testing.T) {
	sys := System{KernelRelease: "6.18.44", BootID: "b", Hostname: "vm", BootTime: time.Date(2026, 12, 2, 15, 28, 36, 0, time.UTC)}
	b, err := json.Marshal(NewPrograms(sys, nil))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"format_version":2,"kind":"programs","system":{"kernel_release":"6.18.44","boot_id":"b","hostname":"vm","boot_time":"2026-12-02T15:28:36Z"},"programs":[]}`
	if string(b) != want {
		t.Errorf("programs document\n%s\nwant\n%s", b, want)
	}
}
