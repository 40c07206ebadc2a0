package harness_test

import "context"

// quietStream is a caller that takes every chunk and says nothing.
type quietStream struct{ taken int }

func (s *quietStream) Taken(context.Context) error         { s.taken++; return nil }
func (s *quietStream) Chunk(context.Context, string) error { return nil }
func (*quietStream) ToolCall(context.Context, string, string, *bool) error {
	return nil
}
func (*quietStream) ToolCallUpdate(context.Context, string, string, *bool) error {
	return nil
}
