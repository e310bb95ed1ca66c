# -*- coding: utf-8 -*-
# Copyright (c) gpuops maintainers
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Markdown that machine text reaches, read as GitHub reads it: rendered by cmark-gfm (GitHub's own renderer, through
cmarkgfm, with every GFM extension: tables, strikethrough, autolinks, tag filter) and by markdown-it-py (CommonMark
with GFM tables), and checked for links, images, HTML and code spans of the text's own."""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import re
from html.parser import HTMLParser

import cmarkgfm
import cmarkgfm.cmark
import markdown_it

# A word that a renderer could autolink: GFM's www., http(s)://, ftp://, e-mail addresses, mailto: and xmpp:, and
# linkify-it's //host (written here from the GFM spec, section 6.9, not imported from the code under test).
LINKABLE = re.compile(r'@|www\.|//|(?:https?|ftp|mailto|xmpp):', re.IGNORECASE)
# An escaped character (text), or a code span without space, backtick, pipe or brace in it.
_TOKEN = re.compile(r'\\.|`([^`\s|{}]+)`')


def gfm(text):
    """The HTML that GitHub's renderer (cmark-gfm with its GFM extensions) makes of ``text``."""
    # Unsafe: raw HTML is kept (GitHub filters it later, by its own rules), so that any tag of the text's own shows.
    return cmarkgfm.github_flavored_markdown_to_html(text, options=cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE)


def commonmark(text):
    """The HTML of a CommonMark renderer with GitHub tables (markdown-it-py, an ansible-lint dependency)."""
    return markdown_it.MarkdownIt('commonmark').enable(['table', 'strikethrough']).render(text)


def plain(markdown):
    """``markdown`` without its backslash escapes and code spans (each is text), read left to right as a renderer
    does. Fails on a code span whose word no renderer would link: the escaper makes code spans of those only."""
    def drop(match):
        word = match.group(1)
        assert word is None or LINKABLE.search(word), (word, markdown)
        return ''
    return _TOKEN.sub(drop, markdown)


class Elements(HTMLParser):
    """The tags and attributes of rendered HTML, the text of each <code> element, of each table cell, and all text."""

    def __init__(self):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.tags, self.attrs, self.code, self.cells, self.text = set(), set(), [], [], []
        self._in_code = self._in_cell = False

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, value in attrs)
        if tag == 'code':
            self._in_code = True
            self.code.append('')
        if tag in ('td', 'th'):
            self._in_cell = True
            self.cells.append('')

    def handle_endtag(self, tag):
        if tag == 'code':
            self._in_code = False
        if tag in ('td', 'th'):
            self._in_cell = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_code:
            self.code[-1] += data
        if self._in_cell:
            self.cells[-1] += data


def elements(html):
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def assert_renders_inert(markdown, allowed_tags):
    """Both renderers make of ``markdown`` only ``allowed_tags`` and <code>, no attribute (a link's href, an image's
    src), and code elements only around words they would have autolinked. Returns cmark-gfm's elements."""
    found = None
    for render in (gfm, commonmark):
        html = render(markdown)
        found = elements(html)
        assert found.tags <= set(allowed_tags) | {'code'}, (render.__name__, found.tags - set(allowed_tags), html)
        assert not found.attrs - {'align', 'style'}, (render.__name__, found.attrs, html)
        for word in found.code:
            assert LINKABLE.search(word) and not re.search(r'\s', word), (render.__name__, word, html)
    return elements(gfm(markdown))
