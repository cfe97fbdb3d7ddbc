package io.github.gcslock.test;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** GCS's matchGlob syntax, one rule per row. */
class GlobTest {

    @ParameterizedTest(name = "{0} ~ {1} = {2}")
    @CsvSource(delimiter = '|', value = {
            // * stays within one segment
            "*.txt        | a.txt        | true",
            "*.txt        | a/b.txt      | false",
            "a/*          | a/b          | true",
            "a/*          | a/b/c        | false",
            "a/*          | a/           | true",
            // ** crosses segments; **/ after a / (or at the start) may match no directory at all
            "**           | a/b/c        | true",
            "**/*.txt     | a.txt        | true",
            "**/*.txt     | x/y/a.txt    | true",
            "a/**/b       | a/b          | true",
            "a/**/b       | a/x/y/b      | true",
            "a/**/b       | ab           | false",
            "a**b         | a/x/b        | true",
            "a/**         | a/           | true",
            "a/**         | a/x/y        | true",
            "a/**         | b/x          | false",
            // ? is one character, not /
            "?.png        | c.png        | true",
            "?.png        | cc.png       | false",
            "a?b          | a/b          | false",
            // character classes, negated with ! or ^, ranges, ] first is literal
            "a/[bc].txt   | a/b.txt      | true",
            "a/[bc].txt   | a/d.txt      | false",
            "a/[!b].txt   | a/c.txt      | true",
            "a/[!b].txt   | a/b.txt      | false",
            "a/[^b].txt   | a/b.txt      | false",
            "[a-c]1       | b1           | true",
            "[a-c]1       | d1           | false",
            "[]x]        | ]            | true",
            "[a-]         | -            | true",
            // braces, nested and holding wildcards
            "*.{png,txt}  | c.png        | true",
            "*.{png,txt}  | a.txt        | true",
            "*.{png,txt}  | a.gif        | false",
            "{a,b/{c,d}}  | b/d          | true",
            "{a,b/{c,d}}  | b/e          | false",
            "{x/*,y}      | x/z          | true",
            // everything else is literal, regex characters included
            "a.b          | a.b          | true",
            "a.b          | axb          | false",
            "(a)+$        | (a)+$        | true",
            "\\*          | *            | true",
            "\\*          | x            | false",
            "€/ü*         | €/über       | true",
            "😀?          | 😀x          | true",
    })
    void matches(String glob, String name, boolean expected) {
        assertThat(Glob.compile(glob).matches(name)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a[bc", "{a,b", "a\\", "[!"})
    void malformedGlobsAre400(String glob) {
        assertThatThrownBy(() -> Glob.compile(glob))
                .isInstanceOfSatisfying(GcsError.class, e -> {
                    assertThat(e.status).isEqualTo(400);
                    assertThat(e.getMessage()).contains(glob);
                });
    }
}
