//! The README's sections that live next to their code (`*/README-section.md`) are copies:
//! each must appear in README.md word for word, so that editing one without the other fails.

#[test]
fn readme_sections_match_their_source_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for section in [
        "tools/python/README-section.md",
        "replay/README-section.md",
        "benches/README-section.md",
    ] {
        let text = std::fs::read_to_string(root.join(section)).unwrap();
        assert!(
            readme.contains(text.trim_end()),
            "{section} differs from its copy in README.md: edit both (or copy the README's \
             section into the file)"
        );
    }
}
