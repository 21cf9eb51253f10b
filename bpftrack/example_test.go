package bpftrack_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/bpftrack"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// A recording perf 6.16 made of a machine running systemd's BPF programs,
// which perf found loaded when it started.
const recording = "../testdata/corpus/mstange_perf6.16_x86_64_zstd_compressed2_dwarf.pipe.data"

// Follow the BPF programs of a recording: feed every record to a Tracker,
// which says what the record changed, and counts the samples in each
// function; then ask which function an address (a sample's ip) is in.
func ExampleTracker() {
	r, err := reader.Open(recording, reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	tr := bpftrack.New(r, bpftrack.Options{Samples: true})
	loaded, samples, inBPF := 0, 0, 0
	for r.Next() {
		rec := r.Record()
		u, err := tr.Feed(rec)
		if err != nil {
			log.Fatal(err)
		}
		if p := u.Loaded; p != nil {
			if loaded++; loaded <= 2 {
				fmt.Printf("program %d (tag %v, synthesized by perf: %v): %d function %s\n",
					p.ID, p.Tag, p.Synthesized, len(p.Funcs), p.Funcs[0].Name)
			}
		}
		if rec.Header.Type == perfdata.RecordSample {
			samples++
			if u.Func != nil {
				inBPF++
			}
		}
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d programs loaded; %d of %d samples in BPF functions\n", loaded, inBPF, samples)

	const ip = 0xffffffffc6a133c4 + 0x20
	if f := tr.FuncAt(ip); f != nil {
		fmt.Printf("%#x is in %s, at +%#x, of program %d\n", uint64(ip), f.Name, ip-f.Addr, f.Program.ID)
	}
	fmt.Println("program 17 loaded at the end:", tr.Loaded(17) != nil)
	// Output:
	// program 16 (tag a42d275341448247, synthesized by perf: true): 1 function bpf_prog_a42d275341448247_sd_devices
	// program 17 (tag 6deef7357e7b4530, synthesized by perf: true): 1 function bpf_prog_6deef7357e7b4530_sd_fw_egress
	// 21 programs loaded; 0 of 547 samples in BPF functions
	// 0xffffffffc6a133e4 is in bpf_prog_6deef7357e7b4530_sd_fw_egress, at +0x20, of program 17
	// program 17 loaded at the end: true
}

// Tell which function each BPF_METADATA record of a recording belongs to,
// as bpfmeta show does. perf 7.2 writes the records of a program it finds
// loaded right after the program's BPF_EVENT, and those of programs loaded
// during the recording at its end; here two are added to a recording as
// perf would place them, the second one at the end although its program was
// loaded before perf started.
func ExampleReadMetadata() {
	r, err := reader.Open(recording, reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{Format: perfdata.FormatPipe})
	if err != nil {
		log.Fatal(err)
	}
	add := func(prog string) {
		m := perfdata.BPFMetadata{ProgName: prog, Entries: []perfdata.BPFMetadataEntry{{Key: "version", Value: `"1.4.2"`}}}
		raw, err := m.Encode(r.ByteOrder(), r.IDHeaderSize())
		if err != nil {
			log.Fatal(err)
		}
		rec := &perfdata.Record{Offset: -1, Outer: -1, Header: perfdata.DecodeEventHeader(raw, r.ByteOrder()), Raw: raw}
		if err := w.WriteRecord(rec); err != nil {
			log.Fatal(err)
		}
	}
	for r.Next() {
		rec := r.Record()
		if err := w.WriteRecord(rec); err != nil {
			log.Fatal(err)
		}
		if rec.Header.Type == perfdata.RecordBPFEvent {
			if e, _ := perfdata.DecodeBPFEvent(rec.Raw, r.ByteOrder()); e.ID == 17 {
				add("bpf_prog_6deef7357e7b4530_sd_fw_egress")
			}
		}
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	add("bpf_prog_a42d275341448247_sd_devices")
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	back, err := reader.NewStream(&out, reader.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer back.Close()
	found, err := bpftrack.ReadMetadata(back)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range found.Records {
		if p := m.Program(); p != nil {
			fmt.Printf("%s: function %#x of program %d (matched by %v), %d samples\n",
				m.Metadata.ProgName, m.Funcs[0].Addr, p.ID, m.Matched, m.Samples)
		} else {
			fmt.Printf("%s: no function of this recording (%v)\n", m.Metadata.ProgName, m.Matched)
		}
	}
	fmt.Println(found.Loads, "programs loaded;", len(found.OfProgram("17")), "record of program 17")
	// Output:
	// bpf_prog_6deef7357e7b4530_sd_fw_egress: function 0xffffffffc6a133c4 of program 17 (matched by name), 0 samples
	// bpf_prog_a42d275341448247_sd_devices: no function of this recording (none)
	// 21 programs loaded; 1 record of program 17
}
