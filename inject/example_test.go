package inject_test

import (
	"bytes"
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/inject"
	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
	"github.com/bpfmeta/bpfmeta/writer"
)

// Add BPF_METADATA records to a recording from programs held in memory
// (a bpfprog.List), made up here for the recording's first BPF program (a
// program, its functions at the addresses of the recording's KSYMBOLs, and
// its metadata); live.New reads the running kernel's instead, and
// snapshot.Open a file of bpfmeta snapshot or watch.
func ExampleWrite() {
	const path = "../testdata/corpus/mstange_perf6.5_aarch64_zstd_compressed.data"
	snap := &bpfprog.List{Programs: []*bpfprog.Program{firstProgram(path)}}

	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{Format: perfdata.FormatPipe})
	if err != nil {
		log.Fatal(err)
	}
	sum, err := inject.Write(w, r, snap, inject.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range sum.Programs[:2] {
		fmt.Printf("program %d: %v, %d records\n", p.ID, p.Outcome, p.Records)
	}
	fmt.Println(sum.Injected, "BPF_METADATA record added")
	// The programs whose metadata perf would have written and the output
	// lacks, by id; those with samples are what bpfmeta inject --strict
	// fails for.
	missing := sum.Missing(inject.MissingWithSamples, inject.MissingOther)
	fmt.Printf("%d missing, %d with samples; the first: program %d, %s\n",
		len(missing), sum.Tally().Missing[inject.MissingWithSamples], missing[0].ID, missing[0].Why())
	// Output:
	// program 2: injected, 1 records
	// program 28: not found, 0 records
	// 1 BPF_METADATA record added
	// 13 missing, 0 with samples; the first: program 28, no such BPF program
}

// firstProgram makes up a program with metadata for the first PROG_LOAD
// BPF_EVENT of the recording at path.
func firstProgram(path string) *bpfprog.Program {
	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	var p bpfprog.Program
	for r.Next() {
		rec := r.Record()
		switch rec.Header.Type {
		case perfdata.RecordKSymbol:
			k, _ := perfdata.DecodeKSymbol(rec.Raw, r.ByteOrder())
			p.Funcs = append(p.Funcs, bpfprog.Func{Addr: k.Addr, Len: k.Len, PerfName: k.Name, KernelName: k.Name})
		case perfdata.RecordBPFEvent:
			e, _ := perfdata.DecodeBPFEvent(rec.Raw, r.ByteOrder())
			p.ID, p.Tag = e.ID, e.Tag
			p.Metadata = &bpfprog.Metadata{
				ProgNames: []string{p.Funcs[0].PerfName},
				Entries:   []bpfprog.Entry{{Key: "version", Value: `"1.4.2"`}},
			}
			return &p
		}
	}
	log.Fatal("no BPF program")
	return nil
}

// Remove the BPF_METADATA records again, for perf before 6.17: what
// bpfmeta strip does. The recording is ExampleWrite's output.
func ExampleStrip() {
	const path = "../testdata/corpus/mstange_perf6.5_aarch64_zstd_compressed.data"
	var injected bytes.Buffer
	if err := injectFirst(&injected, path); err != nil {
		log.Fatal(err)
	}

	r, err := reader.NewStream(&injected, reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	w, err := writer.New(&out, r, writer.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	st := &inject.Strip{Order: r.ByteOrder(), Removed: func(off int64, prog string) {
		fmt.Printf("removing the record at %#x, of %s\n", off, prog)
	}}
	removed, err := writer.Copy(w, r, st.Keep)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(removed, "removed,", st.Stuck, "inside compressed records kept")
	// Output:
	// removing the record at 0x6efe, of bpf_prog_7cc47bbf07148bfe_hid_tail_call
	// 1 removed, 0 inside compressed records kept
}

// injectFirst writes the recording at path to out, a pipe stream, with
// the metadata of its first program (ExampleWrite; injectTo).
func injectFirst(out *bytes.Buffer, path string) error {
	r, err := reader.Open(path, reader.Options{Decompress: true})
	if err != nil {
		return err
	}
	defer r.Close()
	return injectTo(r, out, &bpfprog.List{Programs: []*bpfprog.Program{firstProgram(path)}})
}
