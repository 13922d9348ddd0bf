use super::*;

fn q(input: &str) -> String {
    parse_query(input).unwrap().map(|q| q.to_match()).unwrap_or_default()
}

#[test]
fn unspaced_scripts_become_one_token_per_character() {
    assert_eq!(index_text("用GPT模型"), " 用 GPT 模 型");
    // Thai marks stay with their consonant.
    assert_eq!(index_text("ที่นี่"), " ที่ นี่");
    assert_eq!(index_text("a\u{E000}b\u{E001}c"), "abc");
    let folded: Vec<String> = tokens("Café 東京タワー").into_iter().map(|t| t.folded).collect();
    assert_eq!(folded, ["cafe", "東", "京", "タ", "ワ", "ー"]);
}

#[test]
fn queries_never_pass_syntax_through() {
    let cases: &[(&str, &str)] = &[
        ("hello world", r#"("hello" AND "world")"#),
        (r#""exact phrase""#, r#"("exact phrase")"#),
        ("pars*", r#"("pars" *)"#),
        (r#""unbalanced phrase"#, r#"("unbalanced phrase")"#),
        (r#"say "hi"#, r#"("say" AND "hi")"#),
        ("NEAR(a b)", r#"("near a" AND "b")"#),
        ("a -b", r#"(("a")) NOT ("b")"#),
        ("a NOT b", r#"(("a")) NOT ("b")"#),
        ("a OR b", r#"("a") OR ("b")"#),
        ("a AND b", r#"("a" AND "b")"#),
        ("OR a OR", r#"("a")"#),
        ("col:value", r#"("col value")"#),
        ("^start", r#"("start")"#),
        ("(grouped)", r#"("grouped")"#),
        ("x*", r#"("x")"#),
        ("e-mail", r#"("e mail")"#),
        ("数据库", r#"("数 据 库")"#),
        ("数", r#"("数")"#),
        ("\"\"\"", ""),
        ("* - ( ) : ^", ""),
        ("", ""),
        ("   ", ""),
    ];
    for (input, want) in cases {
        assert_eq!(q(input), *want, "query {input:?}");
    }
    assert_eq!(parse_query("-only").unwrap_err(), QueryError::OnlyExcluded);
    assert_eq!(parse_query(&"a ".repeat(QUERY_TERMS_MAX + 1)).unwrap_err(), QueryError::TooManyTerms);
    assert_eq!(parse_query(&"a".repeat(QUERY_CHARS_MAX + 1)).unwrap_err(), QueryError::TooLong);
}

#[test]
fn snippets_mark_matches_and_stay_short() {
    let query = parse_query("fox").unwrap().unwrap();
    assert_eq!(snippet("The quick brown Fox jumps", &query), "The quick brown \u{E000}Fox\u{E001} jumps");
    let long = format!("{} fox {}", "word ".repeat(100), "tail ".repeat(100));
    let s = snippet(&long, &query);
    assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
    assert!(s.contains("\u{E000}fox\u{E001}"), "{s}");
    assert!(s.chars().count() <= SNIPPET_CHARS + 4, "{}", s.chars().count());
    // Markers already in the text are removed, whitespace runs become one space.
    let s = snippet("a\u{E000}b fox\n\n  end", &query);
    assert_eq!(s, "ab \u{E000}fox\u{E001} end");
    let phrase = parse_query("\"東京\"").unwrap().unwrap();
    assert_eq!(snippet("我住在東京。", &phrase), "我住在\u{E000}東京\u{E001}。");
    let prefix = parse_query("pars*").unwrap().unwrap();
    assert_eq!(snippet("a Parser parses", &prefix), "a \u{E000}Parser\u{E001} \u{E000}parses\u{E001}");
    // No match found (nothing to highlight): the start of the text.
    assert_eq!(snippet("nothing here", &query), "nothing here");
}
