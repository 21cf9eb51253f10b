package bpfprog

import (
	"errors"
	"strings"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// TestList: a List answers as every Source does (the program; ErrNotFound
// for an id it does not have; a *TagMismatchError for an id of another
// program), and lists its programs in ascending id order, whatever their
// order in Programs.
func TestList(t *testing.T) {
	a, b := testkit.Tag(t, "e21be2de8fc54252"), testkit.Tag(t, "a823616fe0b41d16")
	l := &List{Programs: []*Program{{ID: 119, Tag: b}, {ID: 97, Tag: a}}}
	if p, err := l.Lookup(97, a); err != nil || p.ID != 97 {
		t.Errorf("Lookup: %v, %v", p, err)
	}
	_, err := l.Lookup(97, b)
	var tm *TagMismatchError
	if !errors.As(err, &tm) || !errors.Is(err, ErrTagMismatch) || tm.ID != 97 || tm.Want != b || tm.Got != a {
		t.Errorf("Lookup with another tag: %v", err)
	}
	if _, err := l.Lookup(98, a); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrTagMismatch) {
		t.Errorf("Lookup of an id not in the list: %v", err)
	}
	var ids []uint32
	for p, err := range l.All() {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if len(ids) != 2 || ids[0] != 97 || ids[1] != 119 || l.Len() != 2 {
		t.Errorf("All: %v, Len %d", ids, l.Len())
	}
	if _, err := (&List{}).Lookup(1, perfdata.BPFTag{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("an empty List: %v", err)
	}
}

// TestAddrRoundTrip: an address written as Addr reads back as itself; what
// is not "0x" and hex is an error that quotes none of it.
func TestAddrRoundTrip(t *testing.T) {
	for _, a := range []Addr{0, 1, 0xffffffffc0023054, 1<<64 - 1} {
		got, err := ParseAddr(a.String())
		if err != nil || got != a {
			t.Errorf("%s: %#x, %v", a, uint64(got), err)
		}
	}
	for _, s := range []string{"", "0x", "ffffffffc0023054", "0xS3cr3t", "0x1ffffffffffffffff", "0X10"} {
		_, err := ParseAddr(s)
		if err == nil {
			t.Errorf("%q: no error", s)
		} else if s != "" && s != "0x" && strings.Contains(err.Error(), s) {
			t.Errorf("%q: %v quotes it", s, err)
		}
	}
}
