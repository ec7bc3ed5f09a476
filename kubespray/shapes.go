package kubespray

import (
	"sync"

	"github.com/layercheck/layercheck/kubespray/internal/scan"
)

// Shape is the structure kubespray expects of a list or dict variable
// (scan.Shape): its kind, its elements' kind, the fields it reads.
type Shape = scan.Shape

// Shape returns the shape kubespray expects of name, nil when the
// catalogue has none (not a list or dict, or no release facts).
func (c *Catalogue) Shape(name string) *Shape {
	if c == nil || c.Release == nil {
		return nil
	}
	return c.Release.Shapes[name]
}

// ShapeAt is a variable's shape in one bundled release.
type ShapeAt struct {
	Version string
	Shape   *Shape
}

var (
	shapesOnce sync.Once
	shapesIdx  map[string][]ShapeAt
)

// ShapeHistory lists name's shape in each bundled release that has one,
// oldest first ("master" last): when did kubespray change it? The first
// call reads every bundled catalogue; later calls reuse what it read.
func ShapeHistory(name string) []ShapeAt {
	shapesOnce.Do(func() {
		shapesIdx = map[string][]ShapeAt{}
		for _, v := range ReleaseOrder() {
			b, err := bundled.ReadFile(scan.BinaryFileName(v))
			if err != nil {
				continue
			}
			f, err := scan.DecodeBinaryGz(b)
			if err != nil || f.Release == nil {
				continue
			}
			for n, s := range f.Release.Shapes {
				shapesIdx[n] = append(shapesIdx[n], ShapeAt{Version: v, Shape: s})
			}
		}
	})
	return shapesIdx[name]
}
