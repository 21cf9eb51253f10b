package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

func showCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the BPF metadata a recording carries",
		ArgsUsage: " ",
		Description: "Prints every PERF_RECORD_BPF_METADATA record of a recording (file or pipe,\n" +
			"compressed or not): the program name, then its entries as perf script\n" +
			"--show-bpf-events prints them, and the KSYMBOL it belongs to with the number of\n" +
			"samples in it. Needs no modern perf.\n\n" +
			"Examples:\n" +
			"   bpfmeta show -i perf.meta.data\n" +
			"   perf record -o - -a sleep 1 | bpfmeta inject | bpfmeta show --json",
		Flags: []cli.Flag{inputFlag(),
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array, one object per record"}},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("show takes no arguments (use -i)")
			}
			in, err := openInput(c.String("input"), c.App.Reader, reader.Options{Decompress: true})
			if err != nil {
				return err
			}
			defer in.Close()
			recs, err := collectMetadata(in)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(c.App.Writer)
			if c.Bool("json") {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if recs == nil {
					recs = []shownRecord{}
				}
				if err := enc.Encode(recs); err != nil {
					return err
				}
			} else {
				printMetadata(w, recs)
			}
			return w.Flush()
		},
	}
}

// shownRecord is one BPF_METADATA record and what it belongs to.
type shownRecord struct {
	Offset   int64         `json:"offset"`
	ProgName string        `json:"prog_name"`
	Entries  []shownEntry  `json:"entries"`
	KSymbol  *shownKSymbol `json:"ksymbol"`
	Program  *uint32       `json:"program_id,omitempty"`
	Samples  int           `json:"samples"`
	// Others are further KSYMBOLs of the same name (the same function in
	// several programs) the record may belong to; it names no program.
	Others []shownKSymbol `json:"others,omitempty"`
	// after is the program's KSYMBOLs when the record follows its BPF_EVENT.
	after []*ksymRange
}

type shownEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type shownKSymbol struct {
	Addr hexAddr `json:"addr"`
	Len  uint32  `json:"len"`
	Name string  `json:"name"`
	// Matched says how: "name" (the same name), or "function" (only the
	// function name after the tag agrees, as for the main function of a
	// program perf recorded while it was loaded: perf names its record with
	// the first function's tag, the kernel its KSYMBOL with the program's).
	Matched string `json:"matched"`
}

// hexAddr is a kernel address, "0x..." in JSON as in a snapshot: kernel
// addresses are above 2^53, where JSON readers that use doubles (jq,
// JavaScript) would round a number.
type hexAddr uint64

func (a hexAddr) MarshalJSON() ([]byte, error) {
	return []byte(`"0x` + strconv.FormatUint(uint64(a), 16) + `"`), nil
}

type ksymRange struct {
	addr   uint64
	len    uint32
	name   string
	prog   *uint32
	sample int
}

// collectMetadata reads the whole recording: the BPF_METADATA records, the
// BPF KSYMBOLs, and the IP of every sample, to count samples per KSYMBOL.
func collectMetadata(in *input) ([]shownRecord, error) {
	bo := in.ByteOrder()
	var recs []shownRecord
	var ksyms []*ksymRange
	byName := map[string][]*ksymRange{}
	// recent are the KSYMBOLs since the last BPF_EVENT, last those of the
	// last program (perf writes its records right after its BPF_EVENT).
	var recent, last []*ksymRange
	// the BPF KSYMBOLs by address, to count samples as they go by: perf
	// writes a KSYMBOL before the samples in it
	var byAddr []*ksymRange
	for in.Next() {
		rec := in.Record()
		switch rec.Header.Type {
		case perfdata.RecordBPFMetadata:
			m, err := perfdata.DecodeBPFMetadata(rec.Raw, bo, in.IDHeaderSize())
			if err != nil {
				return nil, fmt.Errorf("%s: BPF_METADATA record at %#x: %w", in.name, rec.Offset, err)
			}
			r := shownRecord{Offset: rec.Offset, ProgName: m.ProgName, after: last}
			for _, e := range m.Entries {
				r.Entries = append(r.Entries, shownEntry{e.Key, e.Value})
			}
			recs = append(recs, r)
		case perfdata.RecordKSymbol:
			k, err := perfdata.DecodeKSymbol(rec.Raw, bo)
			if err != nil || k.Type != perfdata.KSymbolTypeBPF || k.Unregister() {
				continue
			}
			kr := &ksymRange{addr: k.Addr, len: k.Len, name: k.Name}
			ksyms = append(ksyms, kr)
			byName[k.Name] = append(byName[k.Name], kr)
			i, _ := slices.BinarySearchFunc(byAddr, kr.addr, func(r *ksymRange, a uint64) int { return cmp.Compare(r.addr, a) })
			byAddr = slices.Insert(byAddr, i, kr)
			recent = append(recent, kr)
		case perfdata.RecordBPFEvent:
			e, err := perfdata.DecodeBPFEvent(rec.Raw, bo)
			if err == nil && e.Type == perfdata.BPFEventProgLoad {
				id := e.ID
				for _, kr := range recent {
					kr.prog = &id
				}
			}
			last, recent = recent, nil
		case perfdata.RecordSample:
			last = nil
			if ip, ok := sampleIP(rec.Raw, bo, in.Attrs()); ok {
				countSample(byAddr, ip)
			}
		}
	}
	if err := in.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", in.name, err)
	}
	for i := range recs {
		r := &recs[i]
		cands, how := byName[r.ProgName], "name"
		for _, kr := range r.after {
			if kr.name == r.ProgName {
				cands = []*ksymRange{kr}
			}
		}
		if len(cands) == 0 {
			if kr := byFunction(ksyms, r.ProgName); kr != nil {
				cands, how = []*ksymRange{kr}, "function"
			}
		}
		for j, kr := range cands {
			k := shownKSymbol{Addr: hexAddr(kr.addr), Len: kr.len, Name: kr.name, Matched: how}
			r.Samples += kr.sample
			if j == 0 {
				r.KSymbol = &k
				if len(cands) == 1 {
					r.Program = kr.prog
				}
			} else {
				r.Others = append(r.Others, k)
			}
		}
	}
	return recs, nil
}

// funcPart is what follows "bpf_prog_<16 hex digits>".
func funcPart(name string) (string, bool) {
	const prefix = len("bpf_prog_") + 16
	if len(name) < prefix || name[:9] != "bpf_prog_" {
		return "", false
	}
	return name[prefix:], true
}

// byFunction finds the one BPF KSYMBOL with the same function part.
func byFunction(ksyms []*ksymRange, name string) *ksymRange {
	fn, ok := funcPart(name)
	if !ok {
		return nil
	}
	var found *ksymRange
	for _, k := range ksyms {
		if f, ok := funcPart(k.name); ok && f == fn {
			if found != nil && found.name != k.name {
				return nil // ambiguous
			}
			found = k
		}
	}
	return found
}

// sampleIP returns a SAMPLE's ip: the first field, after the identifier
// when PERF_SAMPLE_IDENTIFIER is set (perf_evsel__parse_sample).
func sampleIP(raw []byte, bo interface{ Uint64([]byte) uint64 }, attrs []perfdata.Attr) (uint64, bool) {
	if len(attrs) == 0 || attrs[0].SampleType&perfdata.SampleIP == 0 {
		return 0, false
	}
	off := perfdata.EventHeaderSize
	if attrs[0].SampleType&perfdata.SampleIdentifier != 0 {
		off += 8
	}
	if len(raw) < off+8 {
		return 0, false
	}
	return bo.Uint64(raw[off:]), true
}

// countSample counts a sample at ip for the KSYMBOL (sorted by address)
// that has it.
func countSample(byAddr []*ksymRange, ip uint64) {
	i := sort.Search(len(byAddr), func(i int) bool { return byAddr[i].addr > ip }) - 1
	if i >= 0 && ip < byAddr[i].addr+uint64(byAddr[i].len) {
		byAddr[i].sample++
	}
}

func printMetadata(w io.Writer, recs []shownRecord) {
	if len(recs) == 0 {
		fmt.Fprintln(w, "no BPF_METADATA records")
		return
	}
	for i, r := range recs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", r.ProgName)
		for j, e := range r.Entries {
			// as perf_event__fprintf_bpf_metadata() prints them
			fmt.Fprintf(w, "  entry %d: %20s = %s\n", j, e.Key, e.Value)
		}
		switch k := r.KSymbol; {
		case k == nil:
			fmt.Fprintf(w, "  (no BPF KSYMBOL of this name in the recording)\n")
		default:
			prog := ""
			if r.Program != nil {
				prog = fmt.Sprintf(", program %d", *r.Program)
			}
			how := ""
			if k.Matched == "function" {
				how = fmt.Sprintf(" %s (by function name)", k.Name)
			}
			fmt.Fprintf(w, "  ksymbol%s addr %#x len %d%s", how, k.Addr, k.Len, prog)
			for _, o := range r.Others {
				fmt.Fprintf(w, ", or addr %#x len %d", o.Addr, o.Len)
			}
			fmt.Fprintf(w, ": %d samples\n", r.Samples)
		}
	}
}
