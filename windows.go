//go:build windows

package main

// Rukh hands a program its channel as descriptor 3; Windows needs another
// form (an inherited handle), which is not built yet. This import stops a
// Windows build at once with one line naming what is missing.
import _ "rukh_needs_a_windows_form_of_the_fd3_channel_which_is_not_built_yet"
