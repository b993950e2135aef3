package ui

import "strings"

// languageNames names the languages the service's models speak, by their
// base tag, for pickers that would otherwise show bare codes ("de").
var languageNames = map[string]string{
	"ar": "Arabic", "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech", "da": "Danish",
	"de": "German", "el": "Greek", "en": "English", "es": "Spanish", "et": "Estonian",
	"fi": "Finnish", "fr": "French", "he": "Hebrew", "hi": "Hindi", "hu": "Hungarian",
	"id": "Indonesian", "it": "Italian", "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian",
	"lv": "Latvian", "ms": "Malay", "nl": "Dutch", "no": "Norwegian", "pl": "Polish",
	"pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sv": "Swedish",
	"ta": "Tamil", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese",
	"zh": "Chinese", "multi": "Several languages",
}

// languageLabel names a language tag for people: "German (de)",
// "English (en-GB)"; a tag it does not know stays as it is.
func languageLabel(tag string) string {
	base, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	if name, ok := languageNames[strings.ToLower(base)]; ok {
		return name + " (" + tag + ")"
	}
	return tag
}
