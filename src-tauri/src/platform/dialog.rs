//! The native dialog that confirms changes widening what the app may do.
//!
//! Invariant: the answer comes from the person in a window the page can neither draw nor click,
//! never from anything the page sends; the dialog blocks its thread, so it is only ever shown from
//! a blocking thread (`commands::blocking`, `commands::asking`).

use std::sync::Arc;
use switchboard_service::{Confirm, Widening};
use tauri::Manager;

/// Who answers, for the window, changes that widen what the app may do (a key sent to a new
/// origin, a tool's approval loosened, local addresses allowed). The app manages a
/// [`NativeDialog`]; the command tests manage one that answers as the test says. Never anything
/// the page sends: script in the page can call every command the window may call.
#[derive(Clone)]
pub struct Confirmer(pub Arc<dyn Confirm>);

/// Asks the person in a native dialog, which the page can neither draw nor click. Blocks until
/// they answer: only ever called on a blocking thread.
pub struct NativeDialog(pub tauri::AppHandle);

impl Confirm for NativeDialog {
    fn confirm(&self, changes: &[Widening]) -> bool {
        use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
        let yes = match changes {
            [Widening::KeyOrigin { .. }] => "Send the key there",
            _ => "Allow",
        };
        let mut dialog = self
            .0
            .dialog()
            .message(Widening::describe_all(changes))
            .title(Widening::title(changes))
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(yes.into(), "Cancel".into()));
        if let Some(window) = self.0.get_webview_window("main") {
            dialog = dialog.parent(&window);
        }
        dialog.blocking_show()
    }
}
