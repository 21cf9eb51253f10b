package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bpfmeta/bpfmeta/cmd/internal/cliapp"
	"github.com/bpfmeta/bpfmeta/cmd/internal/cliutil"
)

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print bpfmeta's version, the revision it was built from, and the Go release that built it",
		ArgsUsage: " ",
		Description: "The version is the module's (a tag for go install ...@vX.Y.Z, or a pseudo-version\n" +
			"for a build from a clone), with the commit the binary was built from.\n\n" +
			"Examples:\n" +
			"   bpfmeta version\n" +
			"   bpfmeta version | cut -d' ' -f2     (the version alone)",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cliutil.Usagef("version takes no arguments")
			}
			_, err := fmt.Fprintln(c.App.Writer, cliapp.Version("bpfmeta"))
			return err
		},
	}
}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: "Prints a script that makes the shell complete bpfmeta's commands and flags (and\n" +
			"file names where a flag takes one). Install it as your shell expects:\n\n" +
			"Examples:\n" +
			"   source <(bpfmeta completion bash)                               (in ~/.bashrc)\n" +
			"   bpfmeta completion bash > /etc/bash_completion.d/bpfmeta\n" +
			"   bpfmeta completion zsh > \"${fpath[1]}/_bpfmeta\"\n" +
			"   bpfmeta completion fish > ~/.config/fish/completions/bpfmeta.fish",
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return cliutil.Usagef("completion: name one shell: bash, zsh or fish")
			}
			script, err := cliapp.Completion(c.App, c.Args().First())
			if err != nil {
				return cliutil.Usagef("completion: %v", err)
			}
			_, err = io.WriteString(c.App.Writer, script)
			return err
		},
	}
}

// manCommand prints the man page, made from the commands' own definitions
// (their usage, descriptions and flags), so that it says what --help says.
// make man writes it to bin/bpfmeta.1.
func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the man page (roff), made from the commands' own help",
		Description: "Prints the man page in roff: bpfmeta -h, each command's -h and the\n" +
			"exit status, environment and files, in one document. make install installs\n" +
			"it as man bpfmeta finds it.\n\n" +
			"Examples:\n" +
			"   bpfmeta man | man -l -\n" +
			"   bpfmeta man > ~/.local/share/man/man1/bpfmeta.1",
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cliutil.Usagef("man takes no arguments")
			}
			doc := *c.App
			doc.Description = appDescription // the notes are sections of their own
			_, err := io.WriteString(c.App.Writer, cliapp.ManPage(&doc, 1, manSections))
			return err
		},
	}
}
