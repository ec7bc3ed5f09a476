package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
)

// The Node list is the one response of a run that grows with the cluster,
// and most of a Node's bytes are what no layer reads: its managedFields,
// status.images (every image on the node, tens of names and sizes), its
// addresses, allocatable resources, volumes, the pressure conditions and
// most of nodeInfo. Decoded whole, the list was half of the client's work
// on 1,000 simulated Nodes, which carry little of that; more on real ones. decodeNodeList keeps, from the protobuf
// NodeList the API server sends, what the layers and the preflight read
// (nodeKept), and hands each Node's reduced bytes to the generated
// decoder, so that only what is kept allocates. What is dropped is empty in
// the Nodes the Snapshot holds: a layer that starts reading more of a Node
// adds it to nodeKept.

// protobufPrefix starts every body of content type
// application/vnd.kubernetes.protobuf (k8s.io/apimachinery
// runtime/serializer/protobuf): "k8s" and a zero byte, then a
// runtime.Unknown holding the object.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// nodeKept is what decodeNodeList keeps of a Node, by the field numbers of
// k8s.io/api core/v1 and apimachinery meta/v1's generated.proto.
var nodeKept = &fieldFilter{fields: map[uint64]*fieldFilter{
	// ObjectMeta: name, labels (the preflight's node roles) and flannel's
	// backend annotations.
	1: {fields: map[uint64]*fieldFilter{1: nil, 11: nil,
		12: {only: []string{FlannelBackendTypeAnnotation, FlannelBackendDataAnnotation}}}},
	// NodeSpec, all of it: podCIDR, unschedulable, taints.
	2: nil,
	// NodeStatus: capacity's cpu (CoreDNS's autoscaled replicas), the
	// Ready condition, the kubelet's and the container runtime's versions.
	3: {fields: map[uint64]*fieldFilter{
		1: {only: []string{string(corev1.ResourceCPU)}},
		4: {only: []string{string(corev1.NodeReady)}},
		7: {fields: map[uint64]*fieldFilter{6: nil, 7: nil}},
	}},
}}

// fieldFilter says what to keep of a protobuf message.
type fieldFilter struct {
	// fields are the numbers of the fields kept; a field's own filter,
	// when not nil, applies to its value, a message.
	fields map[uint64]*fieldFilter
	// only, when set, keeps a value (a message) only if its field 1, a
	// map entry's key or a condition's type, is one of these.
	only []string
}

// apply appends to dst the fields of msg that f keeps, encoded as they
// are or, when filtered themselves, with their new length.
func (f *fieldFilter) apply(dst, msg []byte) ([]byte, error) {
	for len(msg) > 0 {
		num, typ, start, end, err := nextField(msg)
		if err != nil {
			return dst, err
		}
		field, v := msg[:end], msg[start:end]
		msg = msg[end:]
		sub, ok := f.fields[num]
		if !ok {
			continue
		}
		if sub == nil {
			dst = append(dst, field...)
			continue
		}
		if typ != protowire.BytesType {
			return dst, fmt.Errorf("field %d: wire type %d, not a message", num, typ)
		}
		if sub.only != nil {
			first, err := firstField(v)
			if err != nil {
				return dst, fmt.Errorf("field %d: %v", num, err)
			}
			if !slices.ContainsFunc(sub.only, func(s string) bool { return s == string(first) }) {
				continue
			}
		}
		if sub.fields == nil {
			dst = append(dst, field...)
			continue
		}
		// The value filtered goes after its tag; its length, known only
		// then, is put in front of it.
		dst = protowire.AppendTag(dst, protowire.Number(num), protowire.BytesType)
		at := len(dst)
		if dst, err = sub.apply(dst, v); err != nil {
			return dst, fmt.Errorf("field %d: %v", num, err)
		}
		l := uint64(len(dst) - at)
		n := protowire.SizeVarint(l)
		dst = protowire.AppendVarint(dst, l)
		copy(dst[at+n:], dst[at:len(dst)-n])
		protowire.AppendVarint(dst[at:at], l)
	}
	return dst, nil
}

// firstField is the value of field 1 of message msg (empty when absent).
func firstField(msg []byte) ([]byte, error) {
	var first []byte
	err := eachField(msg, func(num uint64, v []byte) error {
		if num == 1 {
			first = v
		}
		return nil
	})
	return first, err
}

// errNotNodeList is a body decodeNodeList does not take (another kind, an
// encoded envelope): the caller decodes it as client-go would.
var errNotNodeList = errors.New("not a plain protobuf v1 NodeList")

// decodeNodeList decodes body, a protobuf v1 NodeList in its envelope,
// into Nodes carrying the fields the layers read. It returns
// errNotNodeList for a well-formed body that is not one, and an error
// naming the fault for a malformed one.
func decodeNodeList(body []byte) ([]corev1.Node, error) {
	if !bytes.HasPrefix(body, protobufPrefix) {
		return nil, errNotNodeList
	}
	// runtime.Unknown: typeMeta 1 (apiVersion 1, kind 2), raw 2,
	// contentEncoding 3, contentType 4.
	var apiVersion, kind, encoding, raw []byte
	err := eachField(body[len(protobufPrefix):], func(num uint64, v []byte) error {
		switch num {
		case 1:
			return eachField(v, func(num uint64, v []byte) error {
				switch num {
				case 1:
					apiVersion = v
				case 2:
					kind = v
				}
				return nil
			})
		case 2:
			raw = v
		case 3:
			encoding = v
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("protobuf NodeList: %v", err)
	}
	if string(apiVersion) != "v1" || string(kind) != "NodeList" || len(encoding) > 0 {
		return nil, errNotNodeList
	}
	// NodeList: metadata 1, items 2.
	n := 0
	if err := eachField(raw, func(num uint64, _ []byte) error {
		if num == 2 {
			n++
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("protobuf NodeList: %v", err)
	}
	items := make([]corev1.Node, 0, n)
	var node []byte
	err = eachField(raw, func(num uint64, v []byte) error {
		if num != 2 {
			return nil
		}
		var err error
		if node, err = nodeKept.apply(node[:0], v); err != nil {
			return fmt.Errorf("item %d: %v", len(items), err)
		}
		items = append(items, corev1.Node{})
		if err := items[len(items)-1].Unmarshal(node); err != nil {
			return fmt.Errorf("item %d: %v", len(items)-1, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("protobuf NodeList: %v", err)
	}
	return items, nil
}

// eachField calls f with the number and the bytes of every
// length-delimited field of message msg, in order; other wire types are
// skipped.
func eachField(msg []byte, f func(num uint64, v []byte) error) error {
	for len(msg) > 0 {
		num, typ, start, end, err := nextField(msg)
		if err != nil {
			return err
		}
		if typ == protowire.BytesType {
			if err := f(num, msg[start:end]); err != nil {
				return err
			}
		}
		msg = msg[end:]
	}
	return nil
}

// nextField reads the field msg starts with (protowire, protobuf's own
// reader of the wire format): its number and wire type, where its value
// starts (after the tag and, for bytes, the length) and where the field
// ends.
func nextField(msg []byte) (num uint64, typ protowire.Type, start, end int, err error) {
	n, t, tl := protowire.ConsumeTag(msg)
	if tl < 0 {
		return 0, 0, 0, 0, fmt.Errorf("field tag: %v", protowire.ParseError(tl))
	}
	vl := protowire.ConsumeFieldValue(n, t, msg[tl:])
	if vl < 0 {
		return 0, 0, 0, 0, fmt.Errorf("field %d: %v", n, protowire.ParseError(vl))
	}
	start = tl
	if t == protowire.BytesType {
		_, ll := protowire.ConsumeVarint(msg[tl:])
		start += ll
	}
	return uint64(n), t, start, tl + vl, nil
}
