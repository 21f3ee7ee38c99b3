package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// checkJSON checks that hdr is exactly one JSON object (white space may
// follow, as writers pad the header) with no key twice in any object. The
// format forbids duplicate keys, and encoding/json would silently keep the
// last one: a file could then mean one thing to this reader and another to
// a different one. The walk keeps its own stack, so deep nesting cannot
// exhaust the goroutine stack.
func checkJSON(hdr []byte) error {
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber() // numbers are not converted here, only skipped
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("header is not valid JSON: %v", err)
	}
	if tok == nil {
		return errors.New("header is null, want a JSON object")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("header starts with %v, want a JSON object", tok)
	}
	stack := []*jsonObject{{where: "the header", keys: map[string]bool{}, wantKey: true}}
	for len(stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("header is not valid JSON: %v", err)
		}
		top := stack[len(stack)-1]
		if top.keys != nil && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key, ok := tok.(string) // the decoder returns only strings here
			if !ok {
				return fmt.Errorf("header has %v where a key belongs in %s", tok, top.where)
			}
			if top.keys[key] {
				return fmt.Errorf("duplicate key %q in %s", key, top.where)
			}
			top.keys[key] = true
			top.wantKey, top.lastKey = false, key
			continue
		}
		if top.keys != nil {
			top.wantKey = true // after this value comes a key or '}'
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &jsonObject{where: top.inner(), keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &jsonObject{where: top.inner()})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("header has more JSON after the header object")
	}
	return nil
}

// jsonObject is an object or array being walked by checkJSON.
type jsonObject struct {
	where   string          // names the object in messages
	keys    map[string]bool // nil for an array
	wantKey bool
	lastKey string
}

// inner names a value nested in o: an object's value by its key, an
// array's element by the array's name.
func (o *jsonObject) inner() string {
	if o.keys == nil {
		return o.where
	}
	return fmt.Sprintf("%q", o.lastKey)
}
