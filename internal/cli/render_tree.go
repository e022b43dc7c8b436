package cli

import (
	"fmt"
	"io"
)

// treeNode is one line of a drawn tree with the lines under it.
type treeNode struct {
	text     string
	colour   colour
	children []*treeNode
}

// renderTree draws root and its descendants with box-drawing branches:
//
//	GoalDefined 1a2b3c4d
//	├── claim 9a8b7c6d complete
//	└── Plan v1 → v2
//	    └── v1 2b3c4d5e
func renderTree(w io.Writer, style outputStyle, root *treeNode) {
	fmt.Fprintln(w, style.paint(root.colour, root.text))
	renderChildren(w, style, root, "")
}

func renderChildren(w io.Writer, style outputStyle, n *treeNode, prefix string) {
	for i, c := range n.children {
		branch, next := "├── ", "│   "
		if i == len(n.children)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, prefix+branch+style.paint(c.colour, c.text))
		renderChildren(w, style, c, prefix+next)
	}
}
