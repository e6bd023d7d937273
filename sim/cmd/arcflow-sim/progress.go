package main

import (
	"fmt"
	"os"
	"time"
)

// progressLine rewrites one line on a terminal; elsewhere (CI logs) it prints a
// line when the text changes, at most every two seconds.
type progressLine struct {
	out      *os.File
	terminal bool
	last     string
	printed  time.Time
}

func newProgressLine(out *os.File) *progressLine {
	info, err := out.Stat()
	return &progressLine{out: out, terminal: err == nil && info.Mode()&os.ModeCharDevice != 0}
}

func (p *progressLine) show(line string) {
	if p.terminal {
		fmt.Fprintf(p.out, "\r%s", line)
		return
	}
	if line != p.last && time.Since(p.printed) >= 2*time.Second {
		fmt.Fprintln(p.out, line)
		p.last, p.printed = line, time.Now()
	}
}

func (p *progressLine) end() {
	if p.terminal {
		fmt.Fprintln(p.out)
	}
}
