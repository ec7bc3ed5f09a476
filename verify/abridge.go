package verify

import (
	"fmt"
	"strings"
)

// AbridgeLimit is how many items Abridge names before it counts the rest.
const AbridgeLimit = 10

// Abridge joins items with ", " for a message, naming at most the first
// AbridgeLimit and counting the rest ("a, b, ... j and 990 more (1000 in
// all; full list in the JSON result)"), so that a message about 1,000 hosts
// stays one readable line. The result's JSON fields carry the full list.
func Abridge(items []string) string {
	if len(items) <= AbridgeLimit {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more (%d in all; full list in the JSON result)",
		strings.Join(items[:AbridgeLimit], ", "), len(items)-AbridgeLimit, len(items))
}

// AbridgeSemi is Abridge for items that contain commas, joined with "; ".
func AbridgeSemi(items []string) string {
	if len(items) <= AbridgeLimit {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more (%d in all; full list in the JSON result)",
		strings.Join(items[:AbridgeLimit], "; "), len(items)-AbridgeLimit, len(items))
}
