// Command dist writes the .deb and .rpm of one architecture with nfpm, from
// nfpm.yaml and the files make dist staged (scripts/dist.sh). It is a module
// of its own, so that nfpm and its dependencies stay out of bpfmeta's
// go.mod. The packages' file times, and so their bytes, are those of
// SOURCE_DATE_EPOCH, which make dist sets to the commit's time.
//
//	go run . -config nfpm.yaml -arch amd64 -version 1.2.3 -stage DIR -root REPO -out DIR
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb"
	_ "github.com/goreleaser/nfpm/v2/rpm"
)

// formats are the packages written for each architecture.
var formats = []string{"deb", "rpm"}

func main() {
	config := flag.String("config", "nfpm.yaml", "the nfpm configuration")
	out := flag.String("out", ".", "the directory the packages are written to")
	vars := map[string]*string{
		"ARCH":    flag.String("arch", "", "the architecture, in nfpm's words (GOARCH; arm7 for GOARCH=arm GOARM=7)"),
		"VERSION": flag.String("version", "", "the packages' version"),
		"STAGE":   flag.String("stage", "", "the directory of the built files (binary, man page, completions, unit)"),
		"ROOT":    flag.String("root", "", "the repository (README.md, LICENSE)"),
	}
	flag.Parse()
	if err := run(*config, *out, vars); err != nil {
		fmt.Fprintf(os.Stderr, "dist: %v\n", err)
		os.Exit(1)
	}
}

// run writes each format's package of the configuration into out.
func run(config, out string, vars map[string]*string) error {
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		return errors.New("SOURCE_DATE_EPOCH is not set: the packages' file times would be now's, and differ from run to run")
	}
	// the scripts' paths in the configuration are relative to it
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.Chdir(filepath.Dir(config)); err != nil {
		return err
	}
	config = filepath.Base(config)
	var unknown []string
	cfg, err := nfpm.ParseFileWithEnvMapping(config, func(name string) string {
		if v, ok := vars[name]; ok && *v != "" {
			return *v
		}
		if strings.HasPrefix(name, "NFPM_") { // signing passphrases: no signing
			return ""
		}
		unknown = append(unknown, name)
		return ""
	})
	if err != nil {
		return fmt.Errorf("%s: %w", config, err)
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%s: no value for ${%s} (see -h)", config, strings.Join(unknown, "}, ${"))
	}
	for _, format := range formats {
		if err := write(cfg, format, out); err != nil {
			return err
		}
	}
	return nil
}

// write writes the package of one format into out, under a temporary
// name first, so that no partial package is left under its own name.
func write(cfg nfpm.Config, format, out string) error {
	info, err := cfg.Get(format)
	if err != nil {
		return err
	}
	info = nfpm.WithDefaults(info)
	pkg, err := nfpm.Get(format)
	if err != nil {
		return err
	}
	target := filepath.Join(out, pkg.ConventionalFileName(info))
	f, err := os.CreateTemp(out, ".dist-*."+format)
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	info.Target = target
	if err := pkg.Package(info, f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", target, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), target); err != nil {
		return err
	}
	fmt.Println(target)
	return nil
}
