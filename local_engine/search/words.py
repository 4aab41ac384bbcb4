"""The words that never count as a match: English stop words and the words a question is asked with.

Search leaves them out of a question's words (``ranking.content_words``), and a text's vector is
made without them on either side (``vectors.Model``), so "how do I", "what is" or "can I" neither
find a statement by its words nor bring it nearer in meaning.
"""

from __future__ import annotations

# fmt: off
STOP_WORDS = frozenset({
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "cannot",
    "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had",
    "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not",
    "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over",
    "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
    "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why",
    "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "aren", "couldn", "d", "didn",
    "doesn", "don", "hadn", "hasn", "haven", "isn", "ll", "m", "mustn", "re", "s", "shan", "shouldn", "t", "ve",
    "wasn", "weren", "won", "wouldn", "let", "lets", "please", "tell", "explain"
})
# fmt: on
"""English stop words and the words a question is asked with: never a match (the split forms of
``don't``, ``isn't``… included, as the query's words are split at the apostrophe)."""
