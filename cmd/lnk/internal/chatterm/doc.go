// Package chatterm is lnk agent chat on a terminal: Input reads the
// owner's messages with a line editor and their history, and View shows
// the answers, their Markdown rendered, a spinner until the first word,
// and each tool call on a line updated in place. The chat uses them only
// when both its input and its output are a terminal; piped, it reads and
// writes plain lines as before.
package chatterm
