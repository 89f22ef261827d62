<?xml version="1.0"?>
<!--
  Turns one of dbus/*.xml into the Markdown reference in README.md
  (scripts/dbus-reference.sh runs it over every interface file). Each member
  is listed with its signature and the first sentence of the doc comment
  just before it; the comment's name prefix ("StartTask: ") is dropped.
-->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>

  <!-- The doc comment of an element: the comment right before it, if any. -->
  <xsl:template name="summary">
    <xsl:variable name="c" select="preceding-sibling::node()[not(self::text())][1][self::comment()]"/>
    <xsl:variable name="text" select="normalize-space($c)"/>
    <xsl:variable name="body">
      <xsl:choose>
        <xsl:when test="starts-with($text, concat(@name, ':'))">
          <xsl:value-of select="normalize-space(substring-after($text, ':'))"/>
        </xsl:when>
        <xsl:otherwise><xsl:value-of select="$text"/></xsl:otherwise>
      </xsl:choose>
    </xsl:variable>
    <!-- Up to the first "@arg:" and then the first sentence. -->
    <xsl:variable name="head" select="normalize-space(substring-before(concat($body, ' @'), ' @'))"/>
    <xsl:variable name="sentence" select="substring-before(concat($head, ' '), '. ')"/>
    <xsl:choose>
      <xsl:when test="$sentence != ''"><xsl:value-of select="$sentence"/>.</xsl:when>
      <xsl:otherwise><xsl:value-of select="$head"/></xsl:otherwise>
    </xsl:choose>
  </xsl:template>

  <xsl:template name="args">
    <xsl:param name="dir"/>
    <xsl:for-each select="arg[($dir = 'in' and (not(@direction) or @direction = 'in') and local-name(..) = 'method')
                              or ($dir = 'out' and @direction = 'out')
                              or ($dir = 'sig' and local-name(..) = 'signal')]">
      <xsl:if test="position() &gt; 1">, </xsl:if>
      <xsl:value-of select="@type"/><xsl:text> </xsl:text><xsl:value-of select="@name"/>
    </xsl:for-each>
  </xsl:template>

  <xsl:template match="/">
    <xsl:apply-templates select="node/interface"/>
  </xsl:template>

  <xsl:template match="interface">
    <xsl:text>#### </xsl:text><xsl:value-of select="@name"/><xsl:text>&#10;&#10;</xsl:text>
    <xsl:text>| Member | Signature | |&#10;|---|---|---|&#10;</xsl:text>
    <xsl:for-each select="method">
      <xsl:text>| `</xsl:text><xsl:value-of select="@name"/><xsl:text>` | `(</xsl:text>
      <xsl:call-template name="args"><xsl:with-param name="dir" select="'in'"/></xsl:call-template>
      <xsl:text>)</xsl:text>
      <xsl:if test="arg[@direction = 'out']">
        <xsl:text> → (</xsl:text>
        <xsl:call-template name="args"><xsl:with-param name="dir" select="'out'"/></xsl:call-template>
        <xsl:text>)</xsl:text>
      </xsl:if>
      <xsl:text>` | </xsl:text><xsl:call-template name="summary"/><xsl:text> |&#10;</xsl:text>
    </xsl:for-each>
    <xsl:for-each select="property">
      <xsl:text>| `</xsl:text><xsl:value-of select="@name"/><xsl:text>` | property `</xsl:text>
      <xsl:value-of select="@type"/><xsl:text>`, </xsl:text>
      <xsl:value-of select="@access"/><xsl:text> | </xsl:text><xsl:call-template name="summary"/><xsl:text> |&#10;</xsl:text>
    </xsl:for-each>
    <xsl:for-each select="signal">
      <xsl:text>| `</xsl:text><xsl:value-of select="@name"/><xsl:text>` | signal `(</xsl:text>
      <xsl:call-template name="args"><xsl:with-param name="dir" select="'sig'"/></xsl:call-template>
      <xsl:text>)` | </xsl:text><xsl:call-template name="summary"/><xsl:text> |&#10;</xsl:text>
    </xsl:for-each>
    <xsl:text>&#10;</xsl:text>
  </xsl:template>
</xsl:stylesheet>
