// Package droplets describes the droplet kinds of a Cloud Assembly: their
// type specifiers, required properties and output attributes.
//
// It makes no file-system or trust decisions.
package droplets
