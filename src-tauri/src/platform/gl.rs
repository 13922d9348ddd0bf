//! The GL environment on a machine without a GPU.
//!
//! Invariant: it is set first thing in `run`, before any other thread exists, and never overrides
//! a variable the person set or a machine that has a render node.

/// What GTK and WebKit are told on a machine without a GPU (no DRM render node: virtual machines,
/// remote desktops, minimal installs), where all their GL would run in software, through Mesa's
/// software driver and with it about 20 MB of libLLVM in each process that loads it:
/// - WebKit draws directly instead of compositing every frame in software GL, which costs tens of
///   megabytes and CPU for nothing;
/// - it shares no GPU buffers (there are none to share);
/// - it looks for no render device: otherwise the app process opens a software GL display only to
///   learn there is none. The value is never opened while the two above hold; `/dev/null` is not a
///   GPU, should anything open it;
/// - GTK does not probe GL when it connects to the display (nothing in the app draws with GTK's GL).
///
/// The web process still opens a GL display (WebKit aborts without one), so libLLVM stays there.
/// Empty when there is a render node, and when the person set any of these: then they decide.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn gl_env_without_gpu(has_render_node: bool, is_set: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    const VARS: [(&str, &str); 4] = [
        ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
        ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
        ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
        ("GDK_GL", "disable"),
    ];
    if has_render_node || VARS.iter().any(|(var, _)| is_set(var)) {
        return Vec::new();
    }
    VARS.to_vec()
}

/// Applies [`gl_env_without_gpu`] to this process (WebKit's processes inherit it). Linux only.
#[allow(unsafe_code)] // setting environment variables; see the SAFETY note
pub(crate) fn spare_software_gl_without_gpu() {
    #[cfg(target_os = "linux")]
    {
        let has_render_node = std::fs::read_dir("/dev/dri")
            .is_ok_and(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD")));
        for (var, value) in gl_env_without_gpu(has_render_node, |var| std::env::var_os(var).is_some()) {
            // SAFETY: called first thing in `run`, before any other thread exists (no runtime,
            // no logger, no GTK yet), so nothing can read the environment concurrently.
            unsafe { std::env::set_var(var, value) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::gl_env_without_gpu;

    #[test]
    fn without_a_gpu_webkit_draws_directly_and_nothing_probes_gl_in_the_app_process() {
        let env = gl_env_without_gpu(false, |_| false);
        assert_eq!(
            env,
            [
                ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
                ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
                ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
                ("GDK_GL", "disable"),
            ]
        );
    }

    #[test]
    fn a_gpu_or_a_choice_of_the_person_leaves_gtk_and_webkit_alone() {
        assert!(gl_env_without_gpu(true, |_| false).is_empty());
        for chosen in [
            "WEBKIT_DISABLE_COMPOSITING_MODE",
            "WEBKIT_DISABLE_DMABUF_RENDERER",
            "WEBKIT_WEB_RENDER_DEVICE_FILE",
            "GDK_GL",
        ] {
            assert!(gl_env_without_gpu(false, |var| var == chosen).is_empty(), "{chosen}");
        }
    }
}
