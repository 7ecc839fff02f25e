//! The README and the guide in docs/ link to files of this repository
//! (the guide's pages, the benchmark chart): every such link must name a
//! file that exists.

use std::path::{Path, PathBuf};

/// The targets of the Markdown links and images in `text`: what stands
/// between `](` and the next `)`.
fn link_targets(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    out
}

/// The files of this repository that `file` links to and that are missing.
fn missing_targets(root: &Path, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let dir = file.parent().unwrap_or(Path::new(""));
    link_targets(&text)
        .into_iter()
        .filter(|t| !t.contains("://") && !t.starts_with('#') && !t.starts_with("mailto:"))
        .filter_map(|t| {
            let path = t.split('#').next().unwrap();
            (!root.join(dir).join(path).exists()).then(|| format!("{}: {t}", file.display()))
        })
        .collect()
}

#[test]
fn readme_and_guide_links_name_existing_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let name = entry.unwrap().file_name();
        if name.to_string_lossy().ends_with(".md") {
            files.push(Path::new("docs").join(name));
        }
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let linked = link_targets(&readme);
    for page in files.iter().skip(1) {
        let page = page.to_str().unwrap();
        assert!(
            linked.contains(&page),
            "README.md does not link the guide page {page}"
        );
    }
    let missing: Vec<String> = files
        .iter()
        .flat_map(|f| missing_targets(root, f))
        .collect();
    assert!(missing.is_empty(), "links to missing files: {missing:#?}");
}

#[test]
fn link_targets_are_found() {
    let text = "see [a](docs/a.md) and ![chart](docs/c.svg), [web](https://x.y/z)";
    assert_eq!(
        link_targets(text),
        ["docs/a.md", "docs/c.svg", "https://x.y/z"]
    );
}
