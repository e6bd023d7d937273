package docscheck

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Problem is one thing wrong in a file, at a line (1-based; 0 for the whole file).
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return p.File + ": " + p.Msg
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// Block is a fenced code block.
type Block struct {
	Lang string
	// Marker is the HTML comment on the last non-blank line before the fence,
	// without <!-- and -->, e.g. "needs a real cluster" or "example: path".
	Marker string
	// Line is the line of the opening fence; Text the lines between the fences.
	Line int
	Text string
}

// Link is a link target written in a file.
type Link struct {
	Line   int
	Target string
}

// Doc is a parsed Markdown file: the parts the checks read.
type Doc struct {
	Path    string
	Lines   []string
	Blocks  []Block
	Links   []Link
	Anchors map[string]bool
	// Prose holds, for each line outside fenced blocks, the line with inline
	// code spans removed (0-based, "" inside blocks).
	Prose []string
}

var (
	fenceRe     = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	headingRe   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	commentRe   = regexp.MustCompile(`^\s*<!--\s*(.*?)\s*-->\s*$`)
	inlineLink  = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLinkDef  = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	hrefRe      = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	htmlAnchor  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	codeSpanRe  = regexp.MustCompile("(`+)[^`]*?(`+)")
	mdLinkText  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	slugDropRe  = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
	slugSpaceRe = regexp.MustCompile(`\s`)
)

// Parse reads a Markdown file's fenced blocks, links, heading anchors (as
// GitHub makes them) and explicit <a id> anchors.
func Parse(path, text string) *Doc {
	d := &Doc{Path: path, Lines: strings.Split(text, "\n"), Anchors: map[string]bool{}}
	d.Prose = make([]string, len(d.Lines))
	seen := map[string]int{}
	var open *Block
	var fence string
	var body []string
	for i, line := range d.Lines {
		if open != nil {
			if t := strings.TrimSpace(line); strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				open.Text = strings.Join(body, "\n")
				d.Blocks = append(d.Blocks, *open)
				open, body = nil, nil
				continue
			}
			body = append(body, line)
			continue
		}
		if m := fenceRe.FindStringSubmatch(line); m != nil {
			open, fence = &Block{Lang: strings.ToLower(m[2]), Line: i + 1, Marker: markerBefore(d.Lines, i)}, m[1]
			continue
		}
		prose := codeSpanRe.ReplaceAllString(line, "")
		d.Prose[i] = prose
		if m := headingRe.FindStringSubmatch(line); m != nil {
			slug := Slug(m[2])
			if n := seen[slug]; n > 0 {
				d.Anchors[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				d.Anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(prose, -1) {
			d.Anchors[m[1]] = true
		}
		for _, re := range []*regexp.Regexp{inlineLink, hrefRe} {
			for _, m := range re.FindAllStringSubmatch(prose, -1) {
				d.Links = append(d.Links, Link{Line: i + 1, Target: m[1]})
			}
		}
		if m := refLinkDef.FindStringSubmatch(prose); m != nil {
			d.Links = append(d.Links, Link{Line: i + 1, Target: m[1]})
		}
	}
	return d
}

// markerBefore returns the HTML comment on the last non-blank line before line i.
func markerBefore(lines []string, i int) string {
	for j := i - 1; j >= 0; j-- {
		if strings.TrimSpace(lines[j]) == "" {
			continue
		}
		if m := commentRe.FindStringSubmatch(lines[j]); m != nil {
			return m[1]
		}
		return ""
	}
	return ""
}

// Slug is the anchor GitHub gives a heading: its text without Markdown
// markup, lower case, punctuation other than - and _ dropped, spaces as -.
func Slug(heading string) string {
	s := mdLinkText.ReplaceAllString(heading, "$1")
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	s = strings.Map(unicode.ToLower, s)
	s = slugDropRe.ReplaceAllString(s, "")
	return slugSpaceRe.ReplaceAllString(s, "-")
}
