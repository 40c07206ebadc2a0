package memory

import "context"

// The kinds of source search reads.
const (
	KindNotes = "notes" // memory/notes.md, a chunk a note
	KindFile  = "file"  // a file of files/ or skills/
	KindChat  = "chat"  // a conversation's copy, a chunk a message
)

// Source is one thing search reads: the notes, a file, or a
// conversation's copy.
type Source struct {
	// Name is how the calls name it: memory/notes.md, files/a.md,
	// chats/telegram:42.
	Name string
	Kind string
	// File is its file, relative to the agent's home and
	// slash-separated: for a conversation, its copy (chat.md, or
	// memory's own).
	File string
	// Stamp says whether it changed since it was indexed: a file's
	// modification time and size, a conversation's events' files', or
	// the last event of one kept off the machine.
	Stamp string

	thread, driver string // a conversation's thread and its driver's name
}

// Chunk is a part of a source indexed as one: a note, a message of a
// conversation, or some lines of a file.
type Chunk struct {
	Line  int    // its first line, from 1
	Lines int    // how many lines
	Off   int64  // its first byte in the file
	Len   int    // its bytes
	Seq   int64  // a message's number in its conversation
	Label string // a message's heading: who said it and when
	Text  string // what is indexed
}

// Link is a link a Markdown source makes: where, what it says, and
// what it names, resolved (a source's name; "" when it leaves the
// agent's files or isn't a path).
type Link struct {
	Line     int
	Target   string
	Resolved string
	Wiki     string // a wiki link's name as wikiKey makes it, "" for another
}

// Doc is a source with what is indexed of it.
type Doc struct {
	Source Source
	Chunks []Chunk
	Links  []Link
}

// Hit is a chunk a search found, with its source and its rank (lower is
// better, BM25's as SQLite gives it).
type Hit struct {
	Source string
	Kind   string
	File   string
	Chunk  Chunk // without its Text
	Score  float64
}

// Backlink is a link to a source from another.
type Backlink struct {
	From   string
	Line   int
	Target string
	Wiki   bool // a wiki link by name alone, which names this source when it is the nearest so named (nearestWiki)
}

// Index is the search index memory keeps derived from its sources
// (memory/fts is SQLite FTS5's).
type Index interface {
	// Stamps is every source indexed, by name, with the stamp it was
	// indexed at, and the stamps' generation: a new one when they were
	// read again because another process wrote the index, or it was
	// made again; the same while only this one's Put and Remove changed
	// them.
	Stamps(ctx context.Context) (stamps map[string]string, gen uint64, err error)
	// Put indexes docs, each replacing what its source had, at once.
	Put(ctx context.Context, docs []Doc) error
	// Remove forgets the sources named.
	Remove(ctx context.Context, names []string) error
	// Search finds the n chunks that rank best for query, best first,
	// and after them every chunk of the notes that matches it.
	Search(ctx context.Context, query string, n int) ([]Hit, error)
	// Backlinks are the links to the source named: those resolved to
	// it, and the wiki links naming wiki.
	Backlinks(ctx context.Context, name, wiki string) ([]Backlink, error)
	// Wiki is the indexed files a wiki link's name (wikiKey) names,
	// shortest first, at most 100.
	Wiki(ctx context.Context, key string) ([]string, error)
	Close() error
}
