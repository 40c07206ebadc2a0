//go:build unix

package delivery

// keepOpen: a spare's file stays open between holds, since a file renamed
// while open stays open here.
const keepOpen = true
