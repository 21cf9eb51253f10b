package reader_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bpfmeta/bpfmeta/internal/testkit"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// TestUnfinished: every file-format recording of the corpus with its
// header's data size set to 0, as perf record leaves it until it ends (and
// cut at its data offset too: killed before it wrote a record), is
// ErrUnfinished at the data size field, read from a file and through a
// pipe (spooled, as OpenStream does); an empty input is ErrEmpty.
func TestUnfinished(t *testing.T) {
	for _, name := range testkit.CorpusNames(t) {
		b := testkit.CorpusBytes(t, name)
		if !reader.IsFileFormat(b) {
			continue
		}
		m, ok := perfdata.ParseMagic(b[:8], b[16:24])
		if !ok {
			t.Fatalf("%s: no magic", name)
		}
		h, err := perfdata.DecodeFileHeader(b, m.Order)
		if err != nil {
			t.Fatal(err)
		}
		const dataSize = 48
		m.Order.PutUint64(b[dataSize:], 0)
		for what, in := range map[string][]byte{"data size 0": b, "no records yet": b[:h.Data.Offset]} {
			for how, open := range map[string]func([]byte) error{
				"file": func(b []byte) error {
					_, err := reader.NewFile(bytes.NewReader(b), int64(len(b)), reader.Options{})
					return err
				},
				"pipe": func(b []byte) error {
					f := spoolFile(t)
					n, err := reader.Spool(f, bytes.NewReader(b), 0)
					if err == nil {
						_, err = reader.NewFile(f, n, reader.Options{})
					}
					return err
				},
			} {
				err := open(in)
				var fe *reader.FormatError
				if !errors.Is(err, reader.ErrUnfinished) || !errors.As(err, &fe) || fe.Offset != dataSize {
					t.Errorf("%s, %s, from a %s: %v, want ErrUnfinished at %#x", name, what, how, err, dataSize)
				}
			}
		}
	}
	if _, err := reader.NewFile(bytes.NewReader(nil), 0, reader.Options{}); !errors.Is(err, reader.ErrEmpty) {
		t.Errorf("an empty file: %v, want ErrEmpty", err)
	}
	if _, err := reader.NewStream(bytes.NewReader(nil), reader.Options{}); !errors.Is(err, reader.ErrEmpty) {
		t.Errorf("an empty stream: %v, want ErrEmpty", err)
	}
}
