package acp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/lnk-dev/link/contract"
)

// MaxBlocks bounds the content blocks of one prompt.
const MaxBlocks = 1024

// DecodeBlocks reads a prompt's content blocks, one at least, and checks
// each: text has its text; image and audio their base64 data and MIME
// type; a resource its uri and text or base64 blob; a resource_link its
// uri. A prompt with no block, or a block that isn't one of these, is
// refused with a *contract.RuleError naming the rule.
func DecodeBlocks(raw json.RawMessage) ([]Block, error) {
	return decodeBlocks(raw, readCopy)
}

// CheckBlocks refuses raw as DecodeBlocks does, and reads none of its
// large strings: they are looked at where they lie (readCheck), so a
// prompt of many megabytes passed on as it came is checked without a
// copy. raw is left as it was.
func CheckBlocks(raw json.RawMessage) error {
	_, err := decodeBlocks(raw, readCheck)
	return err
}

// decodeBlocks is DecodeBlocks; with readInPlace the blocks' large
// strings are read where they lie in raw (decodeBlock), so a prompt of
// many megabytes is held once, as it was read, and raw is not to be used
// or changed after.
func decodeBlocks(raw json.RawMessage, mode readMode) ([]Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || !json.Valid(raw) {
		return nil, refuse("a prompt is a list of content blocks")
	}
	// Each block is read from its slice of raw: its strings are the one
	// copy of the prompt made here, or none, in place.
	var blocks []Block
	isList, err := eachElement(raw, func(item []byte) error {
		i := len(blocks)
		if i == MaxBlocks {
			return refuse("a prompt is at most %d content blocks", MaxBlocks)
		}
		b, err := decodeBlock(item, mode)
		if err != nil {
			return refuse("block %d: a content block is an object with a type and its fields as strings", i)
		}
		if err := checkBlock(b); err != nil {
			return refuse("block %d: %s", i, err)
		}
		blocks = append(blocks, b)
		return nil
	})
	switch {
	case !isList:
		return nil, refuse("a prompt is a list of content blocks")
	case err != nil:
		return nil, err
	case len(blocks) == 0:
		return nil, refuse("a prompt holds at least one content block")
	}
	return blocks, nil
}

type blockError string

// Error is the rule the block broke.
func (e blockError) Error() string { return string(e) }

func checkBlock(b Block) error {
	switch b.Type {
	case "text":
		return nil
	case "image", "audio":
		if b.MimeType == "" {
			return blockError("an " + b.Type + " block has a mimeType")
		}
		if !isBase64(b.Data) {
			return blockError("an " + b.Type + " block's data is base64, not empty")
		}
	case "resource":
		r := b.Resource
		if r == nil || r.URI == "" {
			return blockError("a resource block holds a resource with a uri")
		}
		if r.Blob != "" && !isBase64(r.Blob) {
			return blockError("a resource's blob is base64")
		}
	case "resource_link":
		if b.URI == "" {
			return blockError("a resource_link block has a uri")
		}
	default:
		return blockError("a block's type is text, image, audio, resource or resource_link")
	}
	return nil
}

// isBase64 says whether s is non-empty standard base64, padded.
func isBase64[T string | []byte](s T) bool {
	if len(s) == 0 || len(s)%4 != 0 {
		return false
	}
	pad := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '=':
			if i < len(s)-2 {
				return false
			}
			pad++
		case pad > 0:
			return false
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

func refuse(format string, args ...any) error {
	return &contract.RuleError{Field: "prompt", Rule: fmt.Sprintf(format, args...)}
}
