// Package live is the running kernel's BPF programs, as a bpfprog.Source.
//
// It is the running kernel as a bpfprog.Source: it reads a loaded program,
// its functions' names and addresses and the metadata perf record would
// write for it, through cilium/ebpf and internal/bpfsys, as perf's
// bpf-event.c does (synthesize_bpf_prog_name, bpf_metadata_create).
//
// It holds nothing: a program is read when asked for. It is not for
// following loads as they happen (bpfprog/watch) nor for keeping programs
// after they are gone (bpfprog/snapshot).
package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	ciliumbtf "github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/bpfmeta/bpfmeta/bpfprog"
	"github.com/bpfmeta/bpfmeta/btf"
	"github.com/bpfmeta/bpfmeta/internal/bpfsys"
	"github.com/bpfmeta/bpfmeta/perfdata"
)

// Kernel is the running kernel as a bpfprog.Source and bpfprog.Lister. It
// reads a program when asked (nothing is cached), so it sees programs
// loaded after it was created and reports programs unloaded since as
// bpfprog.ErrNotFound.
//
// Reading programs, maps and BTF by id needs CAP_SYS_ADMIN (root); the
// errors then wrap os.ErrPermission.
type Kernel struct {
	sys bpfprog.System
}

// New returns the running kernel as a Source.
func New() (*Kernel, error) {
	sys, err := CurrentSystem()
	if err != nil {
		return nil, err
	}
	return &Kernel{sys: sys}, nil
}

// Open is New, then Check: the running kernel as a Source, or the error
// that says it cannot answer (ErrNoAccess, ErrHiddenAddresses: what the
// process is missing). A run that can read no program fails at Open,
// before it starts.
func Open() (*Kernel, error) {
	k, err := New()
	if err != nil {
		return nil, err
	}
	if err := k.Check(); err != nil {
		return nil, err
	}
	return k, nil
}

// System describes the running machine.
func (l *Kernel) System() bpfprog.System { return l.sys }

// Errors Check returns: what the process may not do, and the capability
// that is missing.
var (
	// ErrNoAccess: programs cannot be read by id (CAP_SYS_ADMIN).
	ErrNoAccess = errors.New("BPF programs cannot be read by id without CAP_SYS_ADMIN (run as root)")
	// ErrHiddenAddresses: the kernel hides the programs' addresses
	// (kernel.kptr_restrict, or no CAP_SYSLOG), so they cannot be matched
	// to a recording's KSYMBOLs.
	ErrHiddenAddresses = errors.New("the kernel hides BPF programs' addresses from this process (kernel.kptr_restrict; CAP_SYSLOG shows them)")
)

// Check tells whether the running kernel can answer: it reads the first
// loaded program, and says what is missing when it cannot be read
// (ErrNoAccess) or shows no addresses (ErrHiddenAddresses). With no program
// loaded it has nothing to try and returns nil.
func (l *Kernel) Check() error {
	for p, err := range l.All() {
		if errors.Is(err, os.ErrPermission) {
			return ErrNoAccess
		}
		if err != nil {
			return err
		}
		return CheckAddresses(p)
	}
	return nil
}

// CheckAddresses returns ErrHiddenAddresses when p was read without its
// functions' addresses: the kernel shows them as 0 to a process it hides
// kernel addresses from, and a program without them matches no recording.
func CheckAddresses(p *bpfprog.Program) error {
	for _, f := range p.Funcs {
		if f.Hidden() {
			return ErrHiddenAddresses
		}
	}
	return nil
}

// Lookup reads the program with id if its tag is tag.
func (l *Kernel) Lookup(id uint32, tag perfdata.BPFTag) (*bpfprog.Program, error) {
	return l.read(id, &tag)
}

// Describe names the source in messages.
func (l *Kernel) Describe() string { return "the running kernel" }

// WhyNot says why the kernel has no program, or another, for a load of a
// recording: it has only what is loaded now.
func (l *Kernel) WhyNot(err error, unloaded bool) string {
	switch {
	case errors.Is(err, bpfprog.ErrNotFound) && unloaded:
		return "unloaded during the recording"
	case errors.Is(err, bpfprog.ErrNotFound):
		return "no longer loaded"
	}
	return "its id is another program's now (it was unloaded, and the id reused)"
}

// Hint says how to keep the metadata of programs unloaded before inject.
func (l *Kernel) Hint() string {
	return "the metadata of a program unloaded before inject needs a snapshot: bpfmeta watch -o snap.jsonl -- perf record ..., then inject --snapshot snap.jsonl"
}

// Program reads the program with id now, whatever its tag.
//
// libbpf binds .rodata to a program (BPF_PROG_BIND_MAP) only after loading
// it; read at its PROG_LOAD BPF_EVENT, a program that does not itself use its
// .rodata may show no metadata yet, as it may to perf's side-band thread.
func (l *Kernel) Program(id uint32) (*bpfprog.Program, error) {
	return l.read(id, nil)
}

// Programs reads the programs with the given ids, or every loaded one
// (All) when no id is given. It is all or nothing: a list with a program
// missing would be taken for all there is, so if any program cannot be
// read it returns no program and an error that counts them and wraps the
// first one's.
func (l *Kernel) Programs(ids ...uint32) ([]*bpfprog.Program, error) {
	progs := []*bpfprog.Program{}
	var first error
	failed := 0
	add := func(p *bpfprog.Program, err error) {
		if err != nil {
			if first == nil {
				first = err
			}
			failed++
			return
		}
		progs = append(progs, p)
	}
	if len(ids) > 0 {
		for _, id := range ids {
			add(l.Program(id))
		}
	} else {
		for p, err := range l.All() {
			add(p, err)
		}
	}
	switch {
	case failed == 1:
		return nil, first
	case failed > 1:
		return nil, fmt.Errorf("%d programs could not be read, the first: %w", failed, first)
	}
	return progs, nil
}

// read reads program id (checking its tag when one is given), with its
// load time as a date.
func (l *Kernel) read(id uint32, tag *perfdata.BPFTag) (*bpfprog.Program, error) {
	p, err := readProgram(id, tag)
	if p != nil {
		p.LoadedAt = l.sys.LoadedAt(p)
	}
	return p, err
}

// All reads every loaded program, in ascending id order as perf's
// perf_event__synthesize_bpf_events() walks them. Programs unloaded during
// the walk are left out. An error reading one program is yielded with a nil
// program and the walk goes on; an error listing ids ends it.
func (l *Kernel) All() iter.Seq2[*bpfprog.Program, error] {
	return func(yield func(*bpfprog.Program, error) bool) {
		var id ebpf.ProgramID
		for {
			next, err := ebpf.ProgramGetNextID(id)
			if errors.Is(err, os.ErrNotExist) {
				return
			}
			if err != nil {
				yield(nil, fmt.Errorf("listing BPF programs after id %d: %w", id, withHint(err)))
				return
			}
			id = next
			p, err := l.read(uint32(id), nil)
			if errors.Is(err, bpfprog.ErrNotFound) {
				continue // unloaded between BPF_PROG_GET_NEXT_ID and BPF_PROG_GET_FD_BY_ID
			}
			if !yield(p, err) {
				return
			}
		}
	}
}

// withHint adds what to do to a permission error.
func withHint(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w (reading BPF programs by id needs CAP_SYS_ADMIN: run as root)", err)
	}
	return err
}

// btfCache loads each BTF object once per program read: libbpf loaders share
// one BTF between a program and its maps.
type btfCache map[uint32]*btfObject

// btfObject is a BTF object of the kernel: its types, and which of its
// 8-byte enums are ENUM rather than ENUM64 (package btf).
type btfObject struct {
	spec  *ciliumbtf.Spec
	enums *btf.EnumKinds
}

func (c btfCache) object(id uint32) (*btfObject, error) {
	if o, ok := c[id]; ok {
		return o, nil
	}
	h, err := ciliumbtf.NewHandleFromID(ciliumbtf.ID(id))
	if err != nil {
		return nil, fmt.Errorf("BTF %d: %w", id, withHint(err))
	}
	defer h.Close()
	raw, err := bpfsys.GetBTF(h.FD())
	if err != nil {
		return nil, fmt.Errorf("BTF %d: %w", id, err)
	}
	s, err := ciliumbtf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("BTF %d: %w", id, err)
	}
	enums, err := btf.ReadEnumKinds(raw, s)
	if err != nil {
		return nil, fmt.Errorf("BTF %d: %w", id, err)
	}
	o := &btfObject{s, enums}
	c[id] = o
	return o, nil
}

func (c btfCache) spec(id uint32) (*ciliumbtf.Spec, error) {
	o, err := c.object(id)
	if err != nil {
		return nil, err
	}
	return o.spec, nil
}

// specNamer resolves type ids in s, as btf__type_by_id() + btf__name_by_offset().
func specNamer(s *ciliumbtf.Spec) typeNamer {
	return func(id uint32) (string, bool, error) {
		t, err := s.TypeByID(ciliumbtf.TypeID(id))
		if errors.Is(err, ciliumbtf.ErrNotFound) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return t.TypeName(), true, nil
	}
}

func readProgram(id uint32, wantTag *perfdata.BPFTag) (*bpfprog.Program, error) {
	fail := func(err error) (*bpfprog.Program, error) {
		return nil, fmt.Errorf("program %d: %w", id, err)
	}
	prog, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, bpfprog.NotFound(id)
	}
	if err != nil {
		return fail(withHint(err))
	}
	defer prog.Close()

	info, err := bpfsys.GetProgInfo(prog.FD())
	if err != nil {
		return fail(withHint(err))
	}
	if wantTag != nil {
		if err := bpfprog.CheckTag(id, *wantTag, perfdata.BPFTag(info.Tag)); err != nil {
			return nil, err
		}
	}
	ni, err := newNameInfo(info)
	if err != nil {
		return fail(err)
	}
	p := &bpfprog.Program{
		ID:           info.ID,
		Tag:          perfdata.BPFTag(info.Tag),
		Name:         info.Name,
		Type:         ebpf.ProgramType(info.Type),
		LoadTime:     durationNs(info.LoadTime),
		CreatedByUID: info.CreatedByUID,
		BTFID:        info.BTFID,
		MapIDs:       info.MapIDs,
	}
	specs := btfCache{}
	if p.Funcs, err = readFuncs(info, ni, specs); err != nil {
		return fail(err)
	}
	p.Metadata, p.TooLarge, p.MetadataErr = readMetadata(info, ni, specs)
	return p, nil
}

// newNameInfo is what perf names a program's functions from, once the
// kernel's counts agree as perf_event__synthesize_one_bpf_prog() requires.
func newNameInfo(info *bpfsys.ProgInfo) (*nameInfo, error) {
	n := len(info.ProgTags)
	if info.NrJitedKsyms != 0 && (int(info.NrJitedKsyms) != n || len(info.JitedFuncLens) != n) {
		return nil, fmt.Errorf("kernel reports %d JITed functions, %d lengths and %d tags",
			info.NrJitedKsyms, len(info.JitedFuncLens), n)
	}
	if len(info.FuncInfos) > 0 && len(info.FuncInfos) != n {
		return nil, fmt.Errorf("kernel reports %d func_info records for %d functions", len(info.FuncInfos), n)
	}
	ni := &nameInfo{
		progTags:        make([]perfdata.BPFTag, n),
		name:            info.Name,
		nrJitedKsyms:    int(info.NrJitedKsyms),
		funcInfoRecSize: info.FuncInfoRecSize,
	}
	for i, t := range info.ProgTags {
		ni.progTags[i] = perfdata.BPFTag(t)
	}
	for _, fi := range info.FuncInfos {
		ni.funcTypeIDs = append(ni.funcTypeIDs, fi.TypeID)
	}
	return ni, nil
}

// readFuncs reads the program's JITed functions: each one's address,
// length, tag, BTF name, and the names perf and the kernel give it.
func readFuncs(info *bpfsys.ProgInfo, ni *nameInfo, specs btfCache) ([]bpfprog.Func, error) {
	haveFuncInfo := len(info.FuncInfos) > 0
	var progBTF typeNamer
	if info.BTFID != 0 {
		s, err := specs.spec(info.BTFID)
		if err != nil {
			return nil, err
		}
		progBTF = specNamer(s)
	}
	// perf synthesizes KSYMBOL names with the program's BTF only if
	// btf_id && nr_func_info && func_info_rec_size.
	var ksymBTF typeNamer
	if info.BTFID != 0 && haveFuncInfo && info.FuncInfoRecSize != 0 {
		ksymBTF = progBTF
	}
	funcs := make([]bpfprog.Func, len(ni.progTags))
	for i := range funcs {
		f := &funcs[i]
		f.Tag = ni.progTags[i]
		if info.JitedKsyms != nil {
			f.Addr = info.JitedKsyms[i]
		}
		if i < len(info.JitedFuncLens) {
			f.Len = info.JitedFuncLens[i]
		}
		if haveFuncInfo {
			if progBTF == nil {
				return nil, errors.New("func_info without BTF")
			}
			name, ok, err := progBTF(ni.funcTypeIDs[i])
			if err != nil {
				return nil, fmt.Errorf("function %d: %w", i, err)
			}
			if !ok {
				return nil, fmt.Errorf("function %d: BTF %d has no type %d", i, info.BTFID, ni.funcTypeIDs[i])
			}
			f.BTFName = name
		}
		var err error
		if f.PerfName, err = synthesizeProgName(ni, ksymBTF, i); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		f.KernelName = kernelKsymName(perfdata.BPFTag(info.Tag), f.Tag, i, f.BTFName, haveFuncInfo, info.Name)
	}
	return funcs, nil
}

// durationNs converts nanoseconds, saturating at the largest Duration.
func durationNs(ns uint64) time.Duration {
	const maxDuration = 1<<63 - 1
	if ns > maxDuration {
		ns = maxDuration
	}
	return time.Duration(ns)
}

// Map selection, as perf's bpf_metadata_read_map_data() does it.
const (
	mapTypeArray     = unix.BPF_MAP_TYPE_ARRAY
	metadataKeySize  = 4 // sizeof(int)
	metadataMaxEntry = 1
	rodataMapName    = ".rodata"
)

// readMetadata is perf's bpf_metadata_create(): the entries of the first map
// in map_ids that bpf_metadata_read_map_data() accepts and that is not too
// large for a record (perf 7.2's bpf_metadata_alloc(); TooLargeError says a
// map was passed over for that and no later one had metadata), and one
// prog_name per function from synthesize_bpf_prog_name() with THAT MAP's
// BTF. Maps perf would skip are skipped; anything perf could read and this
// cannot is an error, since skipping it might pick another map than perf does.
func readMetadata(info *bpfsys.ProgInfo, ni *nameInfo, specs btfCache) (*bpfprog.Metadata, *bpfprog.TooLargeError, error) {
	var tooLarge *bpfprog.TooLargeError
	for _, mapID := range info.MapIDs {
		md, nvars, err := readMetadataMap(info.ID, mapID, specs)
		if nvars > perfdata.MaxBPFMetadataEntries {
			if tooLarge == nil {
				tooLarge = &bpfprog.TooLargeError{MapID: mapID, Variables: nvars}
			}
			continue
		}
		if md == nil && err == nil {
			continue
		}
		if md != nil {
			md.ProgNames = make([]string, len(ni.progTags))
			for i := range md.ProgNames {
				name, nerr := synthesizeProgName(ni, specNamer(specs[md.BTFID].spec), i)
				if nerr != nil {
					return nil, nil, &bpfprog.MetadataError{ProgID: info.ID, MapID: mapID, Err: nerr}
				}
				md.ProgNames[i] = name
			}
		}
		return md, nil, err
	}
	return nil, tooLarge, nil
}

// readMetadataMap returns nil, 0, nil for a map perf skips. A non-nil
// Metadata with an error has entries whose value could not be formatted.
// nvars is the number of metadata variables; a map with more than a record
// holds is not read.
func readMetadataMap(progID, mapID uint32, specs btfCache) (md *bpfprog.Metadata, nvars int, err error) {
	mdErr := func(err error) error {
		return &bpfprog.MetadataError{ProgID: progID, MapID: mapID, Err: err}
	}
	m, err := ebpf.NewMapFromID(ebpf.MapID(mapID))
	if err != nil {
		// The program holds a reference to its maps, so this is not a
		// map that went away.
		return nil, 0, mdErr(withHint(err))
	}
	defer m.Close()
	mi, err := bpfsys.GetMapInfo(m.FD())
	if err != nil {
		return nil, 0, mdErr(withHint(err))
	}
	if mi.Type != mapTypeArray || mi.KeySize != metadataKeySize || mi.MaxEntries != metadataMaxEntry ||
		mi.BTFValueTypeID == 0 || !strings.Contains(mi.Name, rodataMapName) {
		return nil, 0, nil
	}
	obj, err := specs.object(mi.BTFID)
	if err != nil {
		return nil, 0, mdErr(err)
	}
	vt, err := obj.spec.TypeByID(ciliumbtf.TypeID(mi.BTFValueTypeID))
	if err != nil {
		return nil, 0, mdErr(fmt.Errorf("value type %d: %w", mi.BTFValueTypeID, err))
	}
	ds, ok := vt.(*ciliumbtf.Datasec)
	if !ok {
		return nil, 0, nil
	}
	nvars = MetadataVars(ds)
	if nvars == 0 {
		return nil, 0, nil
	}
	if nvars > perfdata.MaxBPFMetadataEntries {
		return nil, nvars, nil
	}
	value, err := m.LookupBytes(uint32(0))
	if err != nil {
		return nil, 0, mdErr(fmt.Errorf("lookup key 0: %w", withHint(err)))
	}
	if value == nil {
		return nil, 0, nil // perf skips a map whose lookup fails
	}
	md = &bpfprog.Metadata{MapID: mi.ID, MapName: mi.Name, BTFID: mi.BTFID}
	md.Entries, err = MetadataEntries(ds, value, obj.enums)
	var me *bpfprog.MetadataError
	if errors.As(err, &me) {
		me.ProgID, me.MapID = progID, mapID
	}
	if md.Entries == nil && err != nil {
		return nil, 0, err
	}
	return md, nvars, err
}

// MetadataVars counts the bpf_metadata_ variables of a .rodata map's
// DATASEC, as perf's bpf_metadata_read_map_data() does: a map without any
// gives no record, one with more than perfdata.MaxBPFMetadataEntries none
// either (perf 7.2's bpf_metadata_alloc()).
func MetadataVars(ds *ciliumbtf.Datasec) int {
	n := 0
	for _, vsi := range ds.Vars {
		if _, ok := perfdata.BPFMetadataKey(vsi.Type.TypeName()); ok {
			n++
		}
	}
	return n
}

// MetadataEntries is perf's bpf_metadata_fill_event(): the entries of the
// bpf_metadata_ variables of DATASEC ds, whose section holds value, in
// the DATASEC's order, each with its typed form; enums says which enums
// the raw BTF had as ENUM64 (nil: not known). The one rule of what perf
// records of a map, for the running kernel's maps (Source) and an object
// file's (package stable's Object). A value the dumper's limits cut is
// kept as printed, with a *bpfprog.MetadataError naming its key; a
// DATASEC member that is not a VAR is an error and no entries.
func MetadataEntries(ds *ciliumbtf.Datasec, value []byte, enums *btf.EnumKinds) ([]bpfprog.Entry, error) {
	var entries []bpfprog.Entry
	var firstErr error
	for _, vsi := range ds.Vars {
		name := vsi.Type.TypeName()
		key, ok := perfdata.BPFMetadataKey(name)
		if !ok {
			continue
		}
		if _, ok := vsi.Type.(*ciliumbtf.Var); !ok {
			return nil, &bpfprog.MetadataError{Key: key, Err: fmt.Errorf("DATASEC member is a %T, not a VAR", vsi.Type)}
		}
		// as perf's format_btf_variable(): btf_dump__dump_type_data() of
		// the VAR's type at its offset in the map value, into 256 bytes. perf
		// ignores the dumper's errors and keeps what it printed, and so do
		// we, for every error libbpf has; only our own work limits make the
		// value unknown.
		s, err := metadataDumper(enums).DumpVar(vsi, value)
		if errors.Is(err, btf.ErrLimit) && firstErr == nil {
			firstErr = &bpfprog.MetadataError{Key: key, Err: err}
		}
		entries = append(entries, bpfprog.Entry{Key: key, Value: s, Typed: typedValue(vsi, value)})
	}
	return entries, firstErr
}

// metadataDumper prints a bpf_metadata_ variable as perf's
// format_btf_variable() does: btf_dump__dump_type_data() with
// {.compact = 1, .skip_names = 1, .emit_strings = 1} into a buffer of
// BPF_METADATA_VALUE_LEN bytes (255 and a NUL).
func metadataDumper(enums *btf.EnumKinds) *btf.Dumper {
	return &btf.Dumper{Compact: true, SkipNames: true, EmitStrings: true,
		Enums: enums, Truncate: perfdata.BPFMetadataValueLen - 1}
}

// typedValue is a variable's value as JSON, nil where its type has none.
func typedValue(v ciliumbtf.VarSecinfo, rodata []byte) json.RawMessage {
	b, err := btf.JSONVar(v, rodata)
	if err != nil {
		return nil
	}
	return b
}
