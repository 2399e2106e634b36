package spicepod

import (
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// Bounds on what Load and Parse accept. A spicepod is a page of configuration;
// the bounds keep a hostile or broken file (a stray data dump, a YAML alias
// bomb) from taking the runtime's memory or stack before it reports anything.
const (
	// MaxFileBytes is the largest spicepod file accepted: 1 MiB, about a
	// thousand times the recipe's.
	MaxFileBytes = 1 << 20
	// MaxNodes bounds the YAML nodes of the file with every alias expanded.
	// Aliases may share a block (<<: *defaults); a few that expand to more
	// than this are an alias bomb ("billion laughs").
	MaxNodes = 100_000
	// MaxErrors is how many problems one error reports; the rest are counted.
	MaxErrors = 20
	// maxShownKey bounds how much of an unknown key a message repeats.
	maxShownKey = 64
)

// readLimited reads path, refusing a file over MaxFileBytes without reading
// all of it.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		if fi, err := f.Stat(); err == nil {
			return nil, tooLarge(path, fi.Size())
		}
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

func tooLarge(file string, size int64) error {
	return &Error{File: file, Msg: fmt.Sprintf(
		"the file is %d bytes, over the limit of %d bytes (1 MiB); a spicepod holds configuration only, so check that the right file is named",
		size, MaxFileBytes)}
}

// checkAliases walks the node tree following aliases, as the decoder will, and
// refuses an alias that contains itself (which would recurse forever) and a
// tree that expands to more than MaxNodes nodes: as too large a file when it
// holds that many nodes as written, as an alias bomb when its aliases make it
// so. Expanded sizes are memoized per node, so a bomb is measured in time
// linear in the file.
func checkAliases(root *yaml.Node) (line int, msg string) {
	if n := writtenNodes(root, MaxNodes+1); n > MaxNodes {
		return root.Line, fmt.Sprintf("the file holds more than %d YAML nodes (keys, values and list items); "+
			"a spicepod holds configuration only, so check that the right file is named", MaxNodes)
	}
	const (
		visiting = -1
	)
	sizes := map[*yaml.Node]int{}
	var size func(n *yaml.Node) int
	size = func(n *yaml.Node) int {
		if line != 0 || n == nil {
			return 0
		}
		switch s, ok := sizes[n]; {
		case ok && s == visiting:
			line = n.Line
			msg = fmt.Sprintf("anchor &%s refers to itself through an alias (*%s) inside its own value; "+
				"an alias may only name a block defined before and outside it", n.Anchor, n.Anchor)
			return 0
		case ok:
			return s
		}
		sizes[n] = visiting
		total := 1
		if n.Kind == yaml.AliasNode {
			total += size(n.Alias)
		}
		for _, c := range n.Content {
			total += size(c)
			if total > MaxNodes {
				break
			}
		}
		if total > MaxNodes && line == 0 {
			line = n.Line
			msg = fmt.Sprintf("the aliases here expand to more than %d YAML nodes; "+
				"a spicepod this large is an alias bomb or a mistake, write the blocks out instead", MaxNodes)
		}
		sizes[n] = min(total, MaxNodes+1)
		return sizes[n]
	}
	size(root)
	return line, msg
}

// writtenNodes counts the nodes of the tree as written, aliases not
// followed, up to limit.
func writtenNodes(root *yaml.Node, limit int) int {
	n := 0
	stack := []*yaml.Node{root}
	for len(stack) > 0 && n < limit {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		stack = append(stack, top.Content...)
	}
	return n
}

// shownKey is key as a message repeats it: cut to maxShownKey bytes.
func shownKey(key string) string {
	if len(key) <= maxShownKey {
		return key
	}
	return fmt.Sprintf("%s... (%d bytes)", key[:maxShownKey], len(key))
}
