package journal

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bpfmeta/bpfmeta/bpfprog"
)

// damagedSegment writes a segment of four loads and returns the
// directory, the segment's path, its bytes and where each load's frame
// starts.
func damagedSegment(t testing.TB) (dir, seg string, b []byte, offs []int64, progs []*bpfprog.Program) {
	dir = t.TempDir()
	w, err := Create(dir, system("alpha", "boot-a"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for id := uint32(1); id <= 4; id++ {
		p := program(id, 1, time.Duration(id)*time.Second)
		progs = append(progs, p)
		if err := w.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	seg = filepath.Join(dir, "alpha", segmentName(1))
	j, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for e, err := range j.Host("alpha").Records() {
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, e.Offset)
	}
	b, err = os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	return dir, seg, b, offs, progs
}

// One damaged record loses that record only: the reader finds the next
// frame that reads (issue 46 item 4), says where the damage is, and a
// program the damaged record may have been is not found with ErrDamaged,
// which the Source counts and reports.
func TestDamagedRecord(t *testing.T) {
	_, _, orig, offs, _ := damagedSegment(t)
	for name, flip := range map[string]int64{
		"payload":  offs[1] + frameHeader + 20,
		"length":   offs[1] + 2,
		"checksum": offs[1] + 5,
	} {
		t.Run(name, func(t *testing.T) {
			dir, seg, _, _, progs := damagedSegment(t)
			b := slices.Clone(orig)
			b[flip] ^= 0x10
			if err := os.WriteFile(seg, b, 0o600); err != nil {
				t.Fatal(err)
			}
			j, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			var ids []uint32
			var damaged []Entry
			for e, err := range j.Host("alpha").Records() {
				if err != nil {
					t.Fatal(err)
				}
				if e.Torn != "" {
					t.Errorf("torn: %s", e.Torn)
				}
				if e.Program != nil {
					ids = append(ids, e.Program.ID)
				}
				if e.Damaged != "" {
					damaged = append(damaged, e)
				}
			}
			if !slices.Equal(ids, []uint32{1, 3, 4}) {
				t.Errorf("loads %v, want 1 3 4", ids)
			}
			if len(damaged) != 1 || damaged[0].Offset != offs[1] || damaged[0].Size != offs[2]-offs[1] || !strings.Contains(damaged[0].Damaged, seg) {
				t.Fatalf("damaged records %+v, want one at offset %d", damaged, offs[1])
			}
			s := WithKernel(&bpfprog.List{Sys: system("alpha", "boot-now")}, j)
			for _, p := range progs {
				got, err := s.Find(loadOf(p, "alpha", 0))
				if p.ID == 2 {
					if !errors.Is(err, ErrDamaged) || !errors.Is(err, bpfprog.ErrNotFound) {
						t.Errorf("the damaged load: %v, %v; want ErrDamaged", got, err)
					}
					if why := s.WhyNot(err, true); !strings.Contains(why, "damaged record") {
						t.Errorf("WhyNot: %q", why)
					}
					continue
				}
				if err != nil || got.ID != p.ID {
					t.Errorf("load %d: %v, %v", p.ID, got, err)
				}
			}
			rep := strings.Join(s.Report(), "\n")
			if !strings.Contains(rep, "1 damaged record, skipped: "+seg+": a damaged record at offset "+strconv.FormatInt(offs[1], 10)) || !strings.Contains(rep, "1 of the programs not found could have been among them") {
				t.Errorf("report %q", rep)
			}
		})
	}
}
