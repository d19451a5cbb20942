"""The prompt guard's pure parts: `normalise` (obfuscation undone and named) is the first step of every
validation; `rules` name an attack's phrasing with the fragment they matched."""
