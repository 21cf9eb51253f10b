package perfdata_test

import (
	"encoding/binary"
	"fmt"
	"log"

	"github.com/bpfmeta/bpfmeta/perfdata"
	"github.com/bpfmeta/bpfmeta/reader"
)

// Build the BPF_METADATA record perf 7.2 writes for a program's function,
// and decode it again as perf reads one. The keys are the program's
// bpf_metadata_* variables without the prefix; the values are as btf
// prints them.
func ExampleBPFMetadata_Encode() {
	tag, err := perfdata.ParseBPFTag("e21be2de8fc54252")
	if err != nil {
		log.Fatal(err)
	}
	key, _ := perfdata.BPFMetadataKey("bpf_metadata_version")
	m := perfdata.BPFMetadata{
		ProgName: perfdata.BPFProgName(tag, "handle_exec"),
		Entries:  []perfdata.BPFMetadataEntry{{Key: key, Value: `"1.4.2"`}},
	}
	const idHdrSize = 8 // the recording's sample_id trailer: perf writes zeros
	raw, err := m.Encode(binary.LittleEndian, idHdrSize)
	if err != nil {
		log.Fatal(err)
	}
	h := perfdata.DecodeEventHeader(raw, binary.LittleEndian)
	fmt.Printf("%v, %d bytes (BPFMetadataSize: %d)\n", h.Type, h.Size, perfdata.BPFMetadataSize(len(m.Entries), idHdrSize))

	back, err := perfdata.DecodeBPFMetadata(raw, binary.LittleEndian)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.ProgName)
	for _, e := range back.Entries {
		fmt.Printf("  %s = %s\n", e.Key, e.Value)
	}
	// Output:
	// BPF_METADATA, 856 bytes (BPFMetadataSize: 856)
	// bpf_prog_e21be2de8fc54252_handle_exec
	//   version = "1.4.2"
}

// Decode the records perf writes for the BPF programs it finds loaded
// when it starts: each function's KSYMBOL, then the program's BPF_EVENT.
func ExampleDecodeBPFEvent() {
	r, err := reader.Open("../testdata/corpus/mstange_perf6.16_x86_64_zstd_compressed2_dwarf.pipe.data", reader.Options{Decompress: true})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for n := 0; n < 2 && r.Next(); {
		rec := r.Record()
		switch rec.Header.Type {
		case perfdata.RecordKSymbol:
			k, err := perfdata.DecodeKSymbol(rec.Raw, r.ByteOrder())
			if err != nil {
				log.Fatal(err)
			}
			_, fn, _ := perfdata.ParseBPFProgName(k.Name)
			fmt.Printf("KSYMBOL %v %#x+%d %s (function %s)\n", k.Type, k.Addr, k.Len, k.Name, fn)
		case perfdata.RecordBPFEvent:
			e, err := perfdata.DecodeBPFEvent(rec.Raw, r.ByteOrder())
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("BPF_EVENT %v id %d tag %v\n", e.Type, e.ID, e.Tag)
			n++
		}
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// KSYMBOL BPF 0xffffffffc6a119ec+313 bpf_prog_a42d275341448247_sd_devices (function sd_devices)
	// BPF_EVENT PROG_LOAD id 16 tag a42d275341448247
	// KSYMBOL BPF 0xffffffffc6a133c4+58 bpf_prog_6deef7357e7b4530_sd_fw_egress (function sd_fw_egress)
	// BPF_EVENT PROG_LOAD id 17 tag 6deef7357e7b4530
}
