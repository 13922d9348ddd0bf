//! The native dialogs: the one that confirms changes widening what the app may do, and the file
//! dialogs in which the person chooses a local file for the window (to read) or where an export
//! is saved.
//!
//! Invariant: the answer (and the chosen file) comes from the person in a window the page can
//! neither draw nor click, never from anything the page sends; the dialog blocks its thread, so it is only ever shown from
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

/// Who chooses a local file for the window, to read or to save to: the app manages the native
/// file dialogs ([`FilePicker::native`]); the command tests manage one that answers as the test
/// says. Never a path the page sends: the page only ever gets back a pick and the file's name,
/// or the path the person chose to save to.
#[derive(Clone)]
pub struct FilePicker(pub Arc<PickFn>);

/// Asks the person to choose files for `FileDialog` (one, except for a dialog that takes several);
/// empty when they cancel. Blocks until they answer: only ever called on a blocking thread.
pub type PickFn = dyn Fn(&FileDialog) -> Vec<std::path::PathBuf> + Send + Sync;

/// Which file dialog to show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileDialog {
    /// Open an OpenAPI document.
    OpenApiDocument,
    /// Open a conversations export (the app's own JSON or ChatGPT's `conversations.json`).
    ConversationsImport,
    /// Open files to attach to a message: several at once, images, PDFs and text files.
    Attachments,
    /// Choose a folder (an MCP root), with what it is for as the title.
    Folder {
        /// What the folder is for.
        title: String,
    },
    /// Save an export: the name suggested, the folder it starts in, and the file type.
    SaveExport {
        /// The suggested file name.
        file_name: String,
        /// Where the dialog starts.
        folder: Option<std::path::PathBuf>,
        /// `md` or `json`.
        extension: &'static str,
    },
}

/// The extensions the attachment dialog offers (the shell decides from the bytes, not the name).
pub const ATTACHMENT_IMAGES: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];
/// Text and code files the attachment dialog offers.
pub const ATTACHMENT_TEXT: &[&str] = &[
    "txt", "md", "markdown", "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "xml", "html", "css", "log", "rs",
    "py", "js", "ts", "tsx", "jsx", "svelte", "go", "java", "kt", "c", "h", "cpp", "hpp", "cs", "rb", "php", "swift",
    "sh", "sql", "ini", "cfg",
];

impl FilePicker {
    /// The file the person chose (the first, for a dialog that takes one); `None` when they cancel.
    pub fn pick(&self, which: &FileDialog) -> Option<std::path::PathBuf> {
        (self.0)(which).into_iter().next()
    }

    /// Every file the person chose; empty when they cancel.
    pub fn pick_all(&self, which: &FileDialog) -> Vec<std::path::PathBuf> {
        (self.0)(which)
    }

    /// The native file dialogs, which the page can neither draw nor fill in.
    pub fn native(app: tauri::AppHandle) -> Self {
        FilePicker(Arc::new(move |which: &FileDialog| {
            use tauri_plugin_dialog::DialogExt;
            let mut dialog = app.dialog().file();
            if let Some(window) = app.get_webview_window("main") {
                dialog = dialog.set_parent(&window);
            }
            let one =
                |f: Option<tauri_plugin_dialog::FilePath>| f.and_then(|f| f.into_path().ok()).into_iter().collect();
            match which {
                FileDialog::OpenApiDocument => one(dialog
                    .set_title("Choose an OpenAPI document")
                    .add_filter("OpenAPI document", &["json", "yaml", "yml"])
                    .blocking_pick_file()),
                FileDialog::ConversationsImport => one(dialog
                    .set_title("Import conversations (a Switchboard export or ChatGPT's conversations.json)")
                    .add_filter("Conversations export", &["json"])
                    .blocking_pick_file()),
                FileDialog::Attachments => {
                    let all: Vec<&str> =
                        ATTACHMENT_IMAGES.iter().chain(["pdf"].iter()).chain(ATTACHMENT_TEXT).copied().collect();
                    dialog
                        .set_title("Attach images, PDFs or text files")
                        .add_filter("Images, PDFs and text files", &all)
                        .add_filter("Images", ATTACHMENT_IMAGES)
                        .add_filter("PDF documents", &["pdf"])
                        .add_filter("Text and code files", ATTACHMENT_TEXT)
                        .blocking_pick_files()
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|f| f.into_path().ok())
                        .collect()
                }
                FileDialog::Folder { title } => one(dialog.set_title(title).blocking_pick_folder()),
                FileDialog::SaveExport { file_name, folder, extension } => {
                    let (label, title) = match *extension {
                        "md" => ("Markdown", "Export the chat as Markdown"),
                        _ => ("JSON", "Export as JSON"),
                    };
                    let mut dialog = dialog.set_title(title).set_file_name(file_name).add_filter(label, &[*extension]);
                    if let Some(folder) = folder {
                        dialog = dialog.set_directory(folder);
                    }
                    one(dialog.blocking_save_file())
                }
            }
        }))
    }
}
