package io.github.gcslock.test;

import java.util.regex.Pattern;

/**
 * GCS's {@code matchGlob} syntax for {@code objects.list}, compiled to a regular expression that must
 * match the whole object name:
 * <ul>
 *   <li>{@code *} any run of characters within one path segment (not {@code /});</li>
 *   <li>{@code **} any run of characters, {@code /} included; {@code **}{@code /} after a {@code /} or at
 *       the start also matches no directory at all ({@code a/**}{@code /b} matches {@code a/b});</li>
 *   <li>{@code ?} one character other than {@code /};</li>
 *   <li>{@code [abc]}, {@code [a-z]}, {@code [!a-z]} or {@code [^a-z]}: one character of (not of) the set;</li>
 *   <li>{@code {png,jpg}}: one of the comma-separated alternatives (which may hold wildcards and braces);</li>
 *   <li>{@code \} makes the next character literal.</li>
 * </ul>
 * A malformed glob (an unclosed {@code [} or <code>{</code>, a trailing {@code \}) is a 400, as on GCS.
 */
final class Glob {

    private final String glob;
    private final Pattern pattern;

    private Glob(String glob, Pattern pattern) {
        this.glob = glob;
        this.pattern = pattern;
    }

    static Glob compile(String glob) {
        StringBuilder re = new StringBuilder();
        int braces = 0;
        int i = 0;
        int n = glob.length();
        while (i < n) {
            char c = glob.charAt(i);
            switch (c) {
                case '\\' -> {
                    if (i + 1 >= n) {
                        throw invalid(glob, "ends with an escape character");
                    }
                    int cp = glob.codePointAt(i + 1);
                    literal(re, cp);
                    i += 1 + Character.charCount(cp);
                }
                case '*' -> {
                    if (i + 1 < n && glob.charAt(i + 1) == '*') {
                        boolean segmentStart = i == 0 || glob.charAt(i - 1) == '/';
                        if (segmentStart && i + 2 < n && glob.charAt(i + 2) == '/') {
                            re.append("(?:.*/)?"); // zero or more whole directories
                            i += 3;
                        } else {
                            re.append(".*");
                            i += 2;
                        }
                    } else {
                        re.append("[^/]*");
                        i++;
                    }
                }
                case '?' -> {
                    re.append("[^/]");
                    i++;
                }
                case '[' -> i = characterClass(glob, i, re);
                case '{' -> {
                    braces++;
                    re.append("(?:");
                    i++;
                }
                case '}' -> {
                    if (braces == 0) {
                        literal(re, '}');
                    } else {
                        braces--;
                        re.append(')');
                    }
                    i++;
                }
                case ',' -> {
                    re.append(braces > 0 ? "|" : ",");
                    i++;
                }
                default -> {
                    int cp = glob.codePointAt(i);
                    literal(re, cp);
                    i += Character.charCount(cp);
                }
            }
        }
        if (braces != 0) {
            throw invalid(glob, "has an unclosed '{'");
        }
        return new Glob(glob, Pattern.compile(re.toString(), Pattern.DOTALL));
    }

    boolean matches(String name) {
        return pattern.matcher(name).matches();
    }

    @Override
    public String toString() {
        return glob;
    }

    /** Translates {@code [...]} starting at {@code start}; returns the index after its {@code ]}. */
    private static int characterClass(String glob, int start, StringBuilder re) {
        int i = start + 1;
        int n = glob.length();
        StringBuilder set = new StringBuilder("[");
        if (i < n && (glob.charAt(i) == '!' || glob.charAt(i) == '^')) {
            set.append('^');
            i++;
        }
        boolean first = true;
        while (i < n) {
            int c = glob.codePointAt(i);
            if (c == ']' && !first) {
                re.append(set).append(']');
                return i + 1;
            }
            if (c == '\\' && i + 1 < n) {
                i++;
                c = glob.codePointAt(i);
            }
            if (c == '-' && !first && i + 1 < n && glob.charAt(i + 1) != ']') {
                set.append('-');
            } else {
                set.append("\\x{").append(Integer.toHexString(c)).append('}');
            }
            first = false;
            i += Character.charCount(c);
        }
        throw invalid(glob, "has an unclosed '['");
    }

    private static void literal(StringBuilder re, int c) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            re.append((char) c);
        } else {
            re.append("\\x{").append(Integer.toHexString(c)).append('}');
        }
    }

    private static GcsError invalid(String glob, String why) {
        return new GcsError(400, "invalid", "Invalid matchGlob '" + glob + "': it " + why + ".");
    }
}
