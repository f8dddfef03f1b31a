var Qe=Object.defineProperty;var Xe=(r,e,t)=>e in r?Qe(r,e,{enumerable:!0,configurable:!0,writable:!0,value:t}):r[e]=t;var f=(r,e,t)=>Xe(r,typeof e!="symbol"?e+"":e,t);var G=globalThis,K=G.ShadowRoot&&(G.ShadyCSS===void 0||G.ShadyCSS.nativeShadow)&&"adoptedStyleSheets"in Document.prototype&&"replace"in CSSStyleSheet.prototype,he=Symbol(),we=new WeakMap,M=class{constructor(e,t,s){if(this._$cssResult$=!0,s!==he)throw Error("CSSResult is not constructable. Use `unsafeCSS` or `css` instead.");this.cssText=e,this.t=t}get styleSheet(){let e=this.o,t=this.t;if(K&&e===void 0){let s=t!==void 0&&t.length===1;s&&(e=we.get(t)),e===void 0&&((this.o=e=new CSSStyleSheet).replaceSync(this.cssText),s&&we.set(t,e))}return e}toString(){return this.cssText}},xe=r=>new M(typeof r=="string"?r:r+"",void 0,he),Y=(r,...e)=>{let t=r.length===1?r[0]:e.reduce((s,i,o)=>s+(n=>{if(n._$cssResult$===!0)return n.cssText;if(typeof n=="number")return n;throw Error("Value passed to 'css' function must be a 'css' function result: "+n+". Use 'unsafeCSS' to pass non-literal values, but take care to ensure page security.")})(i)+r[o+1],r[0]);return new M(t,r,he)},Ae=(r,e)=>{if(K)r.adoptedStyleSheets=e.map(t=>t instanceof CSSStyleSheet?t:t.styleSheet);else for(let t of e){let s=document.createElement("style"),i=G.litNonce;i!==void 0&&s.setAttribute("nonce",i),s.textContent=t.cssText,r.appendChild(s)}},ce=K?r=>r:r=>r instanceof CSSStyleSheet?(e=>{let t="";for(let s of e.cssRules)t+=s.cssText;return xe(t)})(r):r;var{is:et,defineProperty:tt,getOwnPropertyDescriptor:st,getOwnPropertyNames:it,getOwnPropertySymbols:rt,getPrototypeOf:ot}=Object,J=globalThis,Se=J.trustedTypes,nt=Se?Se.emptyScript:"",at=J.reactiveElementPolyfillSupport,H=(r,e)=>r,de={toAttribute(r,e){switch(e){case Boolean:r=r?nt:null;break;case Object:case Array:r=r==null?r:JSON.stringify(r)}return r},fromAttribute(r,e){let t=r;switch(e){case Boolean:t=r!==null;break;case Number:t=r===null?null:Number(r);break;case Object:case Array:try{t=JSON.parse(r)}catch{t=null}}return t}},Ee=(r,e)=>!et(r,e),ke={attribute:!0,type:String,converter:de,reflect:!1,useDefault:!1,hasChanged:Ee};Symbol.metadata??=Symbol("metadata"),J.litPropertyMetadata??=new WeakMap;var w=class extends HTMLElement{static addInitializer(e){this._$Ei(),(this.l??=[]).push(e)}static get observedAttributes(){return this.finalize(),this._$Eh&&[...this._$Eh.keys()]}static createProperty(e,t=ke){if(t.state&&(t.attribute=!1),this._$Ei(),this.prototype.hasOwnProperty(e)&&((t=Object.create(t)).wrapped=!0),this.elementProperties.set(e,t),!t.noAccessor){let s=Symbol(),i=this.getPropertyDescriptor(e,s,t);i!==void 0&&tt(this.prototype,e,i)}}static getPropertyDescriptor(e,t,s){let{get:i,set:o}=st(this.prototype,e)??{get(){return this[t]},set(n){this[t]=n}};return{get:i,set(n){let c=i?.call(this);o?.call(this,n),this.requestUpdate(e,c,s)},configurable:!0,enumerable:!0}}static getPropertyOptions(e){return this.elementProperties.get(e)??ke}static _$Ei(){if(this.hasOwnProperty(H("elementProperties")))return;let e=ot(this);e.finalize(),e.l!==void 0&&(this.l=[...e.l]),this.elementProperties=new Map(e.elementProperties)}static finalize(){if(this.hasOwnProperty(H("finalized")))return;if(this.finalized=!0,this._$Ei(),this.hasOwnProperty(H("properties"))){let t=this.properties,s=[...it(t),...rt(t)];for(let i of s)this.createProperty(i,t[i])}let e=this[Symbol.metadata];if(e!==null){let t=litPropertyMetadata.get(e);if(t!==void 0)for(let[s,i]of t)this.elementProperties.set(s,i)}this._$Eh=new Map;for(let[t,s]of this.elementProperties){let i=this._$Eu(t,s);i!==void 0&&this._$Eh.set(i,t)}this.elementStyles=this.finalizeStyles(this.styles)}static finalizeStyles(e){let t=[];if(Array.isArray(e)){let s=new Set(e.flat(1/0).reverse());for(let i of s)t.unshift(ce(i))}else e!==void 0&&t.push(ce(e));return t}static _$Eu(e,t){let s=t.attribute;return s===!1?void 0:typeof s=="string"?s:typeof e=="string"?e.toLowerCase():void 0}constructor(){super(),this._$Ep=void 0,this.isUpdatePending=!1,this.hasUpdated=!1,this._$Em=null,this._$Ev()}_$Ev(){this._$ES=new Promise(e=>this.enableUpdating=e),this._$AL=new Map,this._$E_(),this.requestUpdate(),this.constructor.l?.forEach(e=>e(this))}addController(e){(this._$EO??=new Set).add(e),this.renderRoot!==void 0&&this.isConnected&&e.hostConnected?.()}removeController(e){this._$EO?.delete(e)}_$E_(){let e=new Map,t=this.constructor.elementProperties;for(let s of t.keys())this.hasOwnProperty(s)&&(e.set(s,this[s]),delete this[s]);e.size>0&&(this._$Ep=e)}createRenderRoot(){let e=this.shadowRoot??this.attachShadow(this.constructor.shadowRootOptions);return Ae(e,this.constructor.elementStyles),e}connectedCallback(){this.renderRoot??=this.createRenderRoot(),this.enableUpdating(!0),this._$EO?.forEach(e=>e.hostConnected?.())}enableUpdating(e){}disconnectedCallback(){this._$EO?.forEach(e=>e.hostDisconnected?.())}attributeChangedCallback(e,t,s){this._$AK(e,s)}_$ET(e,t){let s=this.constructor.elementProperties.get(e),i=this.constructor._$Eu(e,s);if(i!==void 0&&s.reflect===!0){let o=(s.converter?.toAttribute!==void 0?s.converter:de).toAttribute(t,s.type);this._$Em=e,o==null?this.removeAttribute(i):this.setAttribute(i,o),this._$Em=null}}_$AK(e,t){let s=this.constructor,i=s._$Eh.get(e);if(i!==void 0&&this._$Em!==i){let o=s.getPropertyOptions(i),n=typeof o.converter=="function"?{fromAttribute:o.converter}:o.converter?.fromAttribute!==void 0?o.converter:de;this._$Em=i;let c=n.fromAttribute(t,o.type);this[i]=c??this._$Ej?.get(i)??c,this._$Em=null}}requestUpdate(e,t,s,i=!1,o){if(e!==void 0){let n=this.constructor;if(i===!1&&(o=this[e]),s??=n.getPropertyOptions(e),!((s.hasChanged??Ee)(o,t)||s.useDefault&&s.reflect&&o===this._$Ej?.get(e)&&!this.hasAttribute(n._$Eu(e,s))))return;this.C(e,t,s)}this.isUpdatePending===!1&&(this._$ES=this._$EP())}C(e,t,{useDefault:s,reflect:i,wrapped:o},n){s&&!(this._$Ej??=new Map).has(e)&&(this._$Ej.set(e,n??t??this[e]),o!==!0||n!==void 0)||(this._$AL.has(e)||(this.hasUpdated||s||(t=void 0),this._$AL.set(e,t)),i===!0&&this._$Em!==e&&(this._$Eq??=new Set).add(e))}async _$EP(){this.isUpdatePending=!0;try{await this._$ES}catch(t){Promise.reject(t)}let e=this.scheduleUpdate();return e!=null&&await e,!this.isUpdatePending}scheduleUpdate(){return this.performUpdate()}performUpdate(){if(!this.isUpdatePending)return;if(!this.hasUpdated){if(this.renderRoot??=this.createRenderRoot(),this._$Ep){for(let[i,o]of this._$Ep)this[i]=o;this._$Ep=void 0}let s=this.constructor.elementProperties;if(s.size>0)for(let[i,o]of s){let{wrapped:n}=o,c=this[i];n!==!0||this._$AL.has(i)||c===void 0||this.C(i,void 0,o,c)}}let e=!1,t=this._$AL;try{e=this.shouldUpdate(t),e?(this.willUpdate(t),this._$EO?.forEach(s=>s.hostUpdate?.()),this.update(t)):this._$EM()}catch(s){throw e=!1,this._$EM(),s}e&&this._$AE(t)}willUpdate(e){}_$AE(e){this._$EO?.forEach(t=>t.hostUpdated?.()),this.hasUpdated||(this.hasUpdated=!0,this.firstUpdated(e)),this.updated(e)}_$EM(){this._$AL=new Map,this.isUpdatePending=!1}get updateComplete(){return this.getUpdateComplete()}getUpdateComplete(){return this._$ES}shouldUpdate(e){return!0}update(e){this._$Eq&&=this._$Eq.forEach(t=>this._$ET(t,this[t])),this._$EM()}updated(e){}firstUpdated(e){}};w.elementStyles=[],w.shadowRootOptions={mode:"open"},w[H("elementProperties")]=new Map,w[H("finalized")]=new Map,at?.({ReactiveElement:w}),(J.reactiveElementVersions??=[]).push("2.1.2");var ue=globalThis,Ce=r=>r,Z=ue.trustedTypes,Te=Z?Z.createPolicy("lit-html",{createHTML:r=>r}):void 0,me="$lit$",x=`lit$${Math.random().toFixed(9).slice(2)}$`,_e="?"+x,lt=`<${_e}>`,C=document,z=()=>C.createComment(""),I=r=>r===null||typeof r!="object"&&typeof r!="function",ge=Array.isArray,Me=r=>ge(r)||typeof r?.[Symbol.iterator]=="function",pe=`[ 	
\f\r]`,U=/<(?:(!--|\/[^a-zA-Z])|(\/?[a-zA-Z][^>\s]*)|(\/?$))/g,Pe=/-->/g,Oe=/>/g,k=RegExp(`>|${pe}(?:([^\\s"'>=/]+)(${pe}*=${pe}*(?:[^ 	
\f\r"'\`<>=]|("|')|))|$)`,"g"),Ne=/'/g,De=/"/g,He=/^(?:script|style|textarea|title)$/i,fe=r=>(e,...t)=>({_$litType$:r,strings:e,values:t}),a=fe(1),kt=fe(2),Et=fe(3),A=Symbol.for("lit-noChange"),h=Symbol.for("lit-nothing"),Re=new WeakMap,E=C.createTreeWalker(C,129);function Ue(r,e){if(!ge(r)||!r.hasOwnProperty("raw"))throw Error("invalid template strings array");return Te!==void 0?Te.createHTML(e):e}var ze=(r,e)=>{let t=r.length-1,s=[],i,o=e===2?"<svg>":e===3?"<math>":"",n=U;for(let c=0;c<t;c++){let l=r[c],u,_,d=-1,m=0;for(;m<l.length&&(n.lastIndex=m,_=n.exec(l),_!==null);)m=n.lastIndex,n===U?_[1]==="!--"?n=Pe:_[1]!==void 0?n=Oe:_[2]!==void 0?(He.test(_[2])&&(i=RegExp("</"+_[2],"g")),n=k):_[3]!==void 0&&(n=k):n===k?_[0]===">"?(n=i??U,d=-1):_[1]===void 0?d=-2:(d=n.lastIndex-_[2].length,u=_[1],n=_[3]===void 0?k:_[3]==='"'?De:Ne):n===De||n===Ne?n=k:n===Pe||n===Oe?n=U:(n=k,i=void 0);let p=n===k&&r[c+1].startsWith("/>")?" ":"";o+=n===U?l+lt:d>=0?(s.push(u),l.slice(0,d)+me+l.slice(d)+x+p):l+x+(d===-2?c:p)}return[Ue(r,o+(r[t]||"<?>")+(e===2?"</svg>":e===3?"</math>":"")),s]},L=class r{constructor({strings:e,_$litType$:t},s){let i;this.parts=[];let o=0,n=0,c=e.length-1,l=this.parts,[u,_]=ze(e,t);if(this.el=r.createElement(u,s),E.currentNode=this.el.content,t===2||t===3){let d=this.el.content.firstChild;d.replaceWith(...d.childNodes)}for(;(i=E.nextNode())!==null&&l.length<c;){if(i.nodeType===1){if(i.hasAttributes())for(let d of i.getAttributeNames())if(d.endsWith(me)){let m=_[n++],p=i.getAttribute(d).split(x),g=/([.?@])?(.*)/.exec(m);l.push({type:1,index:o,name:g[2],strings:p,ctor:g[1]==="."?X:g[1]==="?"?ee:g[1]==="@"?te:P}),i.removeAttribute(d)}else d.startsWith(x)&&(l.push({type:6,index:o}),i.removeAttribute(d));if(He.test(i.tagName)){let d=i.textContent.split(x),m=d.length-1;if(m>0){i.textContent=Z?Z.emptyScript:"";for(let p=0;p<m;p++)i.append(d[p],z()),E.nextNode(),l.push({type:2,index:++o});i.append(d[m],z())}}}else if(i.nodeType===8)if(i.data===_e)l.push({type:2,index:o});else{let d=-1;for(;(d=i.data.indexOf(x,d+1))!==-1;)l.push({type:7,index:o}),d+=x.length-1}o++}}static createElement(e,t){let s=C.createElement("template");return s.innerHTML=e,s}};function T(r,e,t=r,s){if(e===A)return e;let i=s!==void 0?t._$Co?.[s]:t._$Cl,o=I(e)?void 0:e._$litDirective$;return i?.constructor!==o&&(i?._$AO?.(!1),o===void 0?i=void 0:(i=new o(r),i._$AT(r,t,s)),s!==void 0?(t._$Co??=[])[s]=i:t._$Cl=i),i!==void 0&&(e=T(r,i._$AS(r,e.values),i,s)),e}var Q=class{constructor(e,t){this._$AV=[],this._$AN=void 0,this._$AD=e,this._$AM=t}get parentNode(){return this._$AM.parentNode}get _$AU(){return this._$AM._$AU}u(e){let{el:{content:t},parts:s}=this._$AD,i=(e?.creationScope??C).importNode(t,!0);E.currentNode=i;let o=E.nextNode(),n=0,c=0,l=s[0];for(;l!==void 0;){if(n===l.index){let u;l.type===2?u=new O(o,o.nextSibling,this,e):l.type===1?u=new l.ctor(o,l.name,l.strings,this,e):l.type===6&&(u=new se(o,this,e)),this._$AV.push(u),l=s[++c]}n!==l?.index&&(o=E.nextNode(),n++)}return E.currentNode=C,i}p(e){let t=0;for(let s of this._$AV)s!==void 0&&(s.strings!==void 0?(s._$AI(e,s,t),t+=s.strings.length-2):s._$AI(e[t])),t++}},O=class r{get _$AU(){return this._$AM?._$AU??this._$Cv}constructor(e,t,s,i){this.type=2,this._$AH=h,this._$AN=void 0,this._$AA=e,this._$AB=t,this._$AM=s,this.options=i,this._$Cv=i?.isConnected??!0}get parentNode(){let e=this._$AA.parentNode,t=this._$AM;return t!==void 0&&e?.nodeType===11&&(e=t.parentNode),e}get startNode(){return this._$AA}get endNode(){return this._$AB}_$AI(e,t=this){e=T(this,e,t),I(e)?e===h||e==null||e===""?(this._$AH!==h&&this._$AR(),this._$AH=h):e!==this._$AH&&e!==A&&this._(e):e._$litType$!==void 0?this.$(e):e.nodeType!==void 0?this.T(e):Me(e)?this.k(e):this._(e)}O(e){return this._$AA.parentNode.insertBefore(e,this._$AB)}T(e){this._$AH!==e&&(this._$AR(),this._$AH=this.O(e))}_(e){this._$AH!==h&&I(this._$AH)?this._$AA.nextSibling.data=e:this.T(C.createTextNode(e)),this._$AH=e}$(e){let{values:t,_$litType$:s}=e,i=typeof s=="number"?this._$AC(e):(s.el===void 0&&(s.el=L.createElement(Ue(s.h,s.h[0]),this.options)),s);if(this._$AH?._$AD===i)this._$AH.p(t);else{let o=new Q(i,this),n=o.u(this.options);o.p(t),this.T(n),this._$AH=o}}_$AC(e){let t=Re.get(e.strings);return t===void 0&&Re.set(e.strings,t=new L(e)),t}k(e){ge(this._$AH)||(this._$AH=[],this._$AR());let t=this._$AH,s,i=0;for(let o of e)i===t.length?t.push(s=new r(this.O(z()),this.O(z()),this,this.options)):s=t[i],s._$AI(o),i++;i<t.length&&(this._$AR(s&&s._$AB.nextSibling,i),t.length=i)}_$AR(e=this._$AA.nextSibling,t){for(this._$AP?.(!1,!0,t);e!==this._$AB;){let s=Ce(e).nextSibling;Ce(e).remove(),e=s}}setConnected(e){this._$AM===void 0&&(this._$Cv=e,this._$AP?.(e))}},P=class{get tagName(){return this.element.tagName}get _$AU(){return this._$AM._$AU}constructor(e,t,s,i,o){this.type=1,this._$AH=h,this._$AN=void 0,this.element=e,this.name=t,this._$AM=i,this.options=o,s.length>2||s[0]!==""||s[1]!==""?(this._$AH=Array(s.length-1).fill(new String),this.strings=s):this._$AH=h}_$AI(e,t=this,s,i){let o=this.strings,n=!1;if(o===void 0)e=T(this,e,t,0),n=!I(e)||e!==this._$AH&&e!==A,n&&(this._$AH=e);else{let c=e,l,u;for(e=o[0],l=0;l<o.length-1;l++)u=T(this,c[s+l],t,l),u===A&&(u=this._$AH[l]),n||=!I(u)||u!==this._$AH[l],u===h?e=h:e!==h&&(e+=(u??"")+o[l+1]),this._$AH[l]=u}n&&!i&&this.j(e)}j(e){e===h?this.element.removeAttribute(this.name):this.element.setAttribute(this.name,e??"")}},X=class extends P{constructor(){super(...arguments),this.type=3}j(e){this.element[this.name]=e===h?void 0:e}},ee=class extends P{constructor(){super(...arguments),this.type=4}j(e){this.element.toggleAttribute(this.name,!!e&&e!==h)}},te=class extends P{constructor(e,t,s,i,o){super(e,t,s,i,o),this.type=5}_$AI(e,t=this){if((e=T(this,e,t,0)??h)===A)return;let s=this._$AH,i=e===h&&s!==h||e.capture!==s.capture||e.once!==s.once||e.passive!==s.passive,o=e!==h&&(s===h||i);i&&this.element.removeEventListener(this.name,this,s),o&&this.element.addEventListener(this.name,this,e),this._$AH=e}handleEvent(e){typeof this._$AH=="function"?this._$AH.call(this.options?.host??this.element,e):this._$AH.handleEvent(e)}},se=class{constructor(e,t,s){this.element=e,this.type=6,this._$AN=void 0,this._$AM=t,this.options=s}get _$AU(){return this._$AM._$AU}_$AI(e){T(this,e)}},Ie={M:me,P:x,A:_e,C:1,L:ze,R:Q,D:Me,V:T,I:O,H:P,N:ee,U:te,B:X,F:se},ht=ue.litHtmlPolyfillSupport;ht?.(L,O),(ue.litHtmlVersions??=[]).push("3.3.3");var Le=(r,e,t)=>{let s=t?.renderBefore??e,i=s._$litPart$;if(i===void 0){let o=t?.renderBefore??null;s._$litPart$=i=new O(e.insertBefore(z(),o),o,void 0,t??{})}return i._$AI(r),i};var $e=globalThis,$=class extends w{constructor(){super(...arguments),this.renderOptions={host:this},this._$Do=void 0}createRenderRoot(){let e=super.createRenderRoot();return this.renderOptions.renderBefore??=e.firstChild,e}update(e){let t=this.render();this.hasUpdated||(this.renderOptions.isConnected=this.isConnected),super.update(e),this._$Do=Le(t,this.renderRoot,this.renderOptions)}connectedCallback(){super.connectedCallback(),this._$Do?.setConnected(!0)}disconnectedCallback(){super.disconnectedCallback(),this._$Do?.setConnected(!1)}render(){return A}};$._$litElement$=!0,$.finalized=!0,$e.litElementHydrateSupport?.({LitElement:$});var ct=$e.litElementPolyfillSupport;ct?.({LitElement:$});($e.litElementVersions??=[]).push("4.2.2");var We={ATTRIBUTE:1,CHILD:2,PROPERTY:3,BOOLEAN_ATTRIBUTE:4,EVENT:5,ELEMENT:6},Be=r=>(...e)=>({_$litDirective$:r,values:e}),ie=class{constructor(e){}get _$AU(){return this._$AM._$AU}_$AT(e,t,s){this._$Ct=e,this._$AM=t,this._$Ci=s}_$AS(e,t){return this.update(e,t)}update(e,t){return this.render(...t)}};var{I:dt}=Ie,qe=r=>r;var Ve=()=>document.createComment(""),N=(r,e,t)=>{let s=r._$AA.parentNode,i=e===void 0?r._$AB:e._$AA;if(t===void 0){let o=s.insertBefore(Ve(),i),n=s.insertBefore(Ve(),i);t=new dt(o,n,r,r.options)}else{let o=t._$AB.nextSibling,n=t._$AM,c=n!==r;if(c){let l;t._$AQ?.(r),t._$AM=r,t._$AP!==void 0&&(l=r._$AU)!==n._$AU&&t._$AP(l)}if(o!==i||c){let l=t._$AA;for(;l!==o;){let u=qe(l).nextSibling;qe(s).insertBefore(l,i),l=u}}}return t},S=(r,e,t=r)=>(r._$AI(e,t),r),pt={},je=(r,e=pt)=>r._$AH=e,Fe=r=>r._$AH,re=r=>{r._$AR(),r._$AA.remove()};var Ge=(r,e,t)=>{let s=new Map;for(let i=e;i<=t;i++)s.set(r[i],i);return s},Ke=Be(class extends ie{constructor(r){if(super(r),r.type!==We.CHILD)throw Error("repeat() can only be used in text expressions")}dt(r,e,t){let s;t===void 0?t=e:e!==void 0&&(s=e);let i=[],o=[],n=0;for(let c of r)i[n]=s?s(c,n):n,o[n]=t(c,n),n++;return{values:o,keys:i}}render(r,e,t){return this.dt(r,e,t).values}update(r,[e,t,s]){let i=Fe(r),{values:o,keys:n}=this.dt(e,t,s);if(!Array.isArray(i))return this.ut=n,o;let c=this.ut??=[],l=[],u,_,d=0,m=i.length-1,p=0,g=o.length-1;for(;d<=m&&p<=g;)if(i[d]===null)d++;else if(i[m]===null)m--;else if(c[d]===n[p])l[p]=S(i[d],o[p]),d++,p++;else if(c[m]===n[g])l[g]=S(i[m],o[g]),m--,g--;else if(c[d]===n[g])l[g]=S(i[d],o[g]),N(r,l[g+1],i[d]),d++,g--;else if(c[m]===n[p])l[p]=S(i[m],o[p]),N(r,i[d],i[m]),m--,p++;else if(u===void 0&&(u=Ge(n,p,g),_=Ge(c,d,m)),u.has(c[d]))if(u.has(c[m])){let b=_.get(n[p]),le=b!==void 0?i[b]:null;if(le===null){let be=N(r,i[d]);S(be,o[p]),l[p]=be}else l[p]=S(le,o[p]),N(r,i[d],le),i[b]=null;p++}else re(i[m]),m--;else re(i[d]),d++;for(;p<=g;){let b=N(r,l[g+1]);S(b,o[p]),l[p++]=b}for(;d<=m;){let b=i[d++];b!==null&&re(b)}return this.ut=n,je(r,l),A}});async function ut(r,e,t,s,i){let o=[],n=null,c=0;do{let l=await r.callWS(n?{...e,cursor:n}:e);if(!i())return null;o.push(...l[t]),n=l.cursor,c=l.total}while(n&&o.length<Math.max(50,s()));return{rows:o,cursor:n,total:c}}function Ye(r,e){let t=new Set(r.map(s=>s.id));return[...r,...e.filter(s=>!t.has(s.id))]}function mt(r,e,t){return!r.cursor||e.length<=r.rows.length?{rows:r.rows,cursor:r.cursor}:{rows:Ye(r.rows,e.slice(r.rows.length)),cursor:t}}var D=class{constructor(e,{key:t,message:s,fail:i}){this.host=e,this.key=t,this.message=s,this.fail=i,this.rows=[],this.total=0,this.cursor=null,this.loading=!1,this._question=0,this._asked=0,e.addController(this)}_set(e){Object.assign(this,e),this.host.requestUpdate()}async load(e=!1){let t=e?this._question:++this._question,s=e?this._asked:++this._asked,i=()=>t===this._question&&(e||s===this._asked),o=this.message();e&&this.cursor&&(o.cursor=this.cursor),this._set({loading:!0});try{let n=await this.host.hass.callWS(o);if(!i())return!1;let c=e?Ye(this.rows,n[this.key]):n[this.key];return this._set({rows:c,total:n.total,cursor:n.cursor}),!0}catch(n){return i()&&this.fail(n),!1}finally{i()&&this._set({loading:!1})}}async reread(){let e=this._question,t=++this._asked,s=()=>e===this._question&&t===this._asked;try{let i=await ut(this.host.hass,this.message(),this.key,()=>this.rows.length,s);return i?(this._set({...mt(i,this.rows,this.cursor),total:i.total}),!0):!1}catch(i){return s()&&this.fail(i),!1}}};function Je(r,e){let t=new Set(e.map(i=>i.id)),s=new Set([...r].filter(i=>t.has(i)));return{kept:s,dropped:r.size-s.size}}var oe={en:{importPaste:"Paste memories",importFile:"Or upload a file",importFormat:"Format",importDetect:"Tell from the content",importSource:"Where they come from (chatgpt, claude\u2026)",importPreview:"Preview",importFormatFound:"Read as",importTotal:"Entries",importNew:"New",importDuplicates:"Already here",importSupersedes:"Replace a near duplicate",importHistory:"History (replaced or forgotten)",importSecrets:"Hold a code or password",importOwners:"Whose they will be",importNoOwner:"No owner in the file",importDone:"Imported {count} memories; {duplicates} were already here.",importProgress:"{done} of {total} written\u2026",format_assist_memory:"Assist Memory export (memories.json)",format_markdown:"Markdown (MEMORY.md)",format_lines:"One memory a line",format_csv:"CSV with a header",format_mem0:"mem0 or OpenMemory",format_ha_ai_memory:"AI Long Term Memory database",format_home_agent:"Home Agent memory store",title:"Memory",menu:"Menu",search:"Search memories",searchHint:"Type to search by words and meaning",everyone:"Everyone I may see",household:"Household",status:"Status",active:"Active",expiring:"Expiring",archived:"Forgotten",superseded:"Replaced",any:"Any",order:"Order",relevance:"Best match",newest:"Newest",recalled:"Most recalled",owner:"Whose",shown:"{shown} of {total}",more:"Show more",none:"No memories here yet.",loading:"Loading\u2026",close:"Close",add:"Add",import:"Import",edit:"Edit",save:"Save",cancel:"Cancel",text:"Text",overview:"Overview",health:"Database {size} MB \xB7 search by {search} \xB7 {waiting} conversations waiting for digestion \xB7 AI Task {calls} of {cap} calls in the last hour",keywordOnly:"keywords only",profiles:"Profiles",noProfiles:"No profile written yet.",refresh:"Refresh now",forget:"Forget",restore:"Restore",purge:"Erase for good",purgeConfirm:"Erase this memory for good? Its text, its vectors and every copy in the database and the exports are removed; it cannot be restored.",created:"Created",updated:"Updated",expires:"Expires",recalledTimes:"Recalled",lastRecalled:"Last recalled",never:"never",type:"Type",tags:"Tags",origin:"Came from",conversation:"Conversation",replaced:"It replaced",replacedBy:"Replaced by",error:"Something went wrong: {error}",memories:"Memories",conversations:"Conversations",type_fact:"Fact",type_preference:"Preference",type_instruction:"Instruction",type_event:"Event",type_summary:"Summary",type_profile:"Profile",type_other:"Other",origin_tool:"Said to the assistant",origin_digestion:"Digested from a conversation",origin_action:"Added by hand or an action",origin_import:"Imported",filters:"Filters ({count})",tag:"Tag",tagHint:"any tag",from:"From",to:"To",select:"Select memory #{id}",selected:"{count} selected",clearSelection:"Clear selection",selectionDropped:"Unselected {count}: no longer in the list (changed elsewhere).",openGone:"Memory #{id} was closed: it could not be read again ({error}).",purgeManyConfirm:"Erase these {count} memories for good? Their texts, vectors and every copy in the database and the exports are removed; they cannot be restored.",openConversation:"open the conversation",embedding:"Meaning search: {provider} {model}, {state}, {progress}% embedded ({pending} waiting)",connected:"answering",unreachable:"not answering (keyword search meanwhile)",digestion:"Digestion",state_waiting:"Waiting",state_done:"Digested",state_skipped:"Skipped",state_failed:"Failed",reason_empty:"nothing was said",reason_too_short:"too short",reason_device_commands:"only device commands",reason_agent_opted_out:"this agent is left out in the options",reason_device_opted_out:"this device is left out in the options",reason_timeout:"the AI Task did not answer in time",reason_malformed:"the AI Task's answer was not usable",reason_unavailable:"no AI Task entity is available",reason_rate_limited:"the hourly AI Task budget is used up",reason_store:"the database could not be written",conversationsShown:"{shown} of {total} conversations",noConversations:"No conversations captured yet.",conversationLabel:"{time}, {speaker}: {preview}",noWords:"(no words)",messagesCount:"{count} messages",producedCount:"{count} memories",conversation:"Conversation",speaker:"Who spoke",agent:"Agent",device:"Device",started:"Started",retryAt:"Next try",role_assistant:"Assistant",role_tool_result:"Tool",gave:"What it gave",gaveNothing:"No memory came from it (yet).",digestNow:"Digest now",digesting:"Digesting\u2026",eraseConversation:"Erase the conversation",eraseConversationConfirm:"Erase this conversation for good? Its messages are removed from the database, its search index and its vectors; they cannot be brought back. The memories it gave stay (forget them on their own)."},de:{importPaste:"Erinnerungen einf\xFCgen",importFile:"Oder eine Datei hochladen",importFormat:"Format",importDetect:"Am Inhalt erkennen",importSource:"Woher sie kommen (chatgpt, claude\u2026)",importPreview:"Vorschau",importFormatFound:"Gelesen als",importTotal:"Eintr\xE4ge",importNew:"Neu",importDuplicates:"Schon vorhanden",importSupersedes:"Ersetzen eine fast gleiche",importHistory:"Verlauf (ersetzt oder vergessen)",importSecrets:"Enthalten einen Code oder ein Passwort",importOwners:"Wem sie geh\xF6ren werden",importNoOwner:"Ohne Besitzer in der Datei",importDone:"{count} Erinnerungen importiert; {duplicates} waren schon vorhanden.",importProgress:"{done} von {total} geschrieben\u2026",format_assist_memory:"Export von Assist Memory (memories.json)",format_markdown:"Markdown (MEMORY.md)",format_lines:"Eine Erinnerung pro Zeile",format_csv:"CSV mit Kopfzeile",format_mem0:"mem0 oder OpenMemory",format_ha_ai_memory:"Datenbank von AI Long Term Memory",format_home_agent:"Speicher von Home Agent",title:"Ged\xE4chtnis",menu:"Men\xFC",search:"Erinnerungen durchsuchen",searchHint:"Tippen, um nach W\xF6rtern und Bedeutung zu suchen",everyone:"Alle, die ich sehen darf",household:"Haushalt",status:"Status",active:"Aktiv",expiring:"L\xE4uft ab",archived:"Vergessen",superseded:"Ersetzt",any:"Alle",order:"Reihenfolge",relevance:"Beste Treffer",newest:"Neueste",recalled:"Am h\xE4ufigsten abgerufen",owner:"Wessen",shown:"{shown} von {total}",more:"Mehr anzeigen",none:"Hier gibt es noch keine Erinnerungen.",loading:"Wird geladen\u2026",close:"Schlie\xDFen",add:"Hinzuf\xFCgen",import:"Importieren",edit:"Bearbeiten",save:"Speichern",cancel:"Abbrechen",text:"Text",overview:"\xDCbersicht",health:"Datenbank {size} MB \xB7 Suche mit {search} \xB7 {waiting} Gespr\xE4che warten auf die Auswertung \xB7 AI Task {calls} von {cap} Aufrufen in der letzten Stunde",keywordOnly:"nur Stichw\xF6rtern",profiles:"Profile",noProfiles:"Noch kein Profil geschrieben.",refresh:"Jetzt aktualisieren",forget:"Vergessen",restore:"Wiederherstellen",purge:"Endg\xFCltig l\xF6schen",purgeConfirm:"Diese Erinnerung endg\xFCltig l\xF6schen? Ihr Text, ihre Vektoren und jede Kopie in der Datenbank und in den Exporten werden entfernt; sie kann nicht wiederhergestellt werden.",created:"Erstellt",updated:"Ge\xE4ndert",expires:"L\xE4uft ab am",recalledTimes:"Abgerufen",lastRecalled:"Zuletzt abgerufen",never:"nie",type:"Art",tags:"Schlagw\xF6rter",origin:"Herkunft",conversation:"Gespr\xE4ch",replaced:"Sie ersetzte",replacedBy:"Ersetzt durch",error:"Etwas ist schiefgegangen: {error}",memories:"Erinnerungen",conversations:"Gespr\xE4che",type_fact:"Tatsache",type_preference:"Vorliebe",type_instruction:"Anweisung",type_event:"Ereignis",type_summary:"Zusammenfassung",type_profile:"Profil",type_other:"Sonstiges",origin_tool:"Dem Assistenten gesagt",origin_digestion:"Aus einem Gespr\xE4ch ausgewertet",origin_action:"Von Hand oder per Aktion hinzugef\xFCgt",origin_import:"Importiert",filters:"Filter ({count})",tag:"Schlagwort",tagHint:"ein Schlagwort",from:"Von",to:"Bis",select:"Erinnerung #{id} ausw\xE4hlen",selected:"{count} ausgew\xE4hlt",clearSelection:"Auswahl aufheben",selectionDropped:"{count} abgew\xE4hlt: nicht mehr in der Liste (anderswo ge\xE4ndert).",openGone:"Erinnerung #{id} wurde geschlossen: sie lie\xDF sich nicht erneut lesen ({error}).",purgeManyConfirm:"Diese {count} Erinnerungen endg\xFCltig l\xF6schen? Ihre Texte, Vektoren und jede Kopie in der Datenbank und in den Exporten werden entfernt; sie k\xF6nnen nicht wiederhergestellt werden.",openConversation:"Gespr\xE4ch \xF6ffnen",embedding:"Bedeutungssuche: {provider} {model}, {state}, {progress} % eingebettet ({pending} warten)",connected:"antwortet",unreachable:"antwortet nicht (solange nur Stichwortsuche)",digestion:"Auswertung",state_waiting:"Wartet",state_done:"Ausgewertet",state_skipped:"\xDCbersprungen",state_failed:"Fehlgeschlagen",reason_empty:"es wurde nichts gesagt",reason_too_short:"zu kurz",reason_device_commands:"nur Ger\xE4tebefehle",reason_agent_opted_out:"dieser Agent ist in den Optionen ausgenommen",reason_device_opted_out:"dieses Ger\xE4t ist in den Optionen ausgenommen",reason_timeout:"der AI Task hat nicht rechtzeitig geantwortet",reason_malformed:"die Antwort des AI Task war nicht verwendbar",reason_unavailable:"keine AI-Task-Entit\xE4t verf\xFCgbar",reason_rate_limited:"das st\xFCndliche AI-Task-Budget ist aufgebraucht",reason_store:"die Datenbank konnte nicht schreiben",conversationsShown:"{shown} von {total} Gespr\xE4chen",noConversations:"Noch keine Gespr\xE4che aufgezeichnet.",conversationLabel:"{time}, {speaker}: {preview}",noWords:"(keine Worte)",messagesCount:"{count} Nachrichten",producedCount:"{count} Erinnerungen",conversation:"Gespr\xE4ch",speaker:"Wer sprach",agent:"Agent",device:"Ger\xE4t",started:"Begonnen",retryAt:"N\xE4chster Versuch",role_assistant:"Assistent",role_tool_result:"Werkzeug",gave:"Was daraus wurde",gaveNothing:"Daraus ist (noch) keine Erinnerung entstanden.",digestNow:"Jetzt auswerten",digesting:"Wird ausgewertet\u2026",eraseConversation:"Gespr\xE4ch l\xF6schen",eraseConversationConfirm:"Dieses Gespr\xE4ch endg\xFCltig l\xF6schen? Seine Nachrichten werden aus der Datenbank, dem Suchindex und den Vektoren entfernt und k\xF6nnen nicht zur\xFCckgeholt werden. Die Erinnerungen daraus bleiben (vergiss sie einzeln)."}};function Ze(r){return r in oe.en}function y(r,e,t={}){let i=(oe[r?.split("-")[0]]??oe.en)[e]??oe.en[e]??e;for(let[o,n]of Object.entries(t))i=i.replace(`{${o}}`,String(n));return i}var ye=Y`
    :host {
      display: block;
      min-height: 100vh;
      background: var(--primary-background-color);
      color: var(--primary-text-color);
      font-family: var(--paper-font-body1_-_font-family, var(--ha-font-family-body, sans-serif));
    }
    header {
      display: flex;
      flex-wrap: wrap;
      gap: 12px;
      align-items: center;
      padding: 12px 16px;
      background: var(--app-header-background-color, var(--primary-color));
      color: var(--app-header-text-color, var(--text-primary-color));
    }
    .menu {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 22px;
      cursor: pointer;
      padding: 4px 8px;
    }
    h1 {
      margin: 0;
      font-size: 20px;
      font-weight: 400;
      flex: 0 0 auto;
    }
    input[type="search"] {
      flex: 1 1 240px;
      min-width: 0;
      padding: 8px 12px;
      border-radius: 8px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font-size: 16px;
    }
    [hidden] {
      display: none !important;
    }
    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
    label {
      display: flex;
      flex-direction: column;
      font-size: 12px;
    }
    select,
    textarea,
    .editor input,
    .filters input {
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    main {
      padding: 8px 16px 32px;
      max-width: 960px;
      margin: 0 auto;
    }
    .count {
      color: var(--secondary-text-color);
      font-size: 14px;
    }
    .list {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .memory {
      width: 100%;
      text-align: start;
      display: flex;
      flex-direction: column;
      gap: 6px;
      padding: 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font: inherit;
      cursor: pointer;
    }
    .memory:focus-visible,
    button:focus-visible,
    select:focus-visible,
    input:focus-visible {
      outline: 2px solid var(--primary-color);
      outline-offset: 2px;
    }
    .memory.archived,
    .memory.superseded {
      opacity: 0.7;
    }
    .content {
      overflow-wrap: anywhere;
    }
    .meta {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .chip {
      padding: 0 8px;
      border-radius: 10px;
      background: var(--secondary-background-color);
    }
    .chip.person {
      background: var(--primary-color);
      color: var(--text-primary-color);
    }
    .more,
    .actions button {
      margin-top: 12px;
      padding: 8px 16px;
      border-radius: 8px;
      border: 1px solid var(--primary-color);
      background: transparent;
      color: var(--primary-color);
      font: inherit;
      cursor: pointer;
    }
    .actions button.danger {
      border-color: var(--error-color);
      color: var(--error-color);
    }
    .notice {
      margin: 8px 0;
      color: var(--primary-text-color);
      font-size: 14px;
    }
    .error {
      margin: 8px 16px;
      color: var(--error-color);
    }
    .detail {
      position: fixed;
      inset: auto 0 0 auto;
      top: 0;
      width: min(420px, 100vw);
      overflow-y: auto;
      background: var(--card-background-color);
      color: var(--primary-text-color);
      border-inline-start: 1px solid var(--divider-color);
      box-shadow: var(--ha-card-box-shadow, 0 0 12px rgba(0, 0, 0, 0.3));
      padding-bottom: 24px;
    }
    .detail header {
      justify-content: space-between;
    }
    .detail header button {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 20px;
      cursor: pointer;
    }
    .detail h2 {
      margin: 0;
      font-size: 18px;
      font-weight: 400;
    }
    .full,
    .detail dl,
    .detail h3,
    .chain,
    .actions {
      margin-inline: 16px;
    }
    .full {
      font-size: 16px;
      overflow-wrap: anywhere;
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 4px 12px;
      font-size: 14px;
    }
    dt {
      color: var(--secondary-text-color);
    }
    dd {
      margin: 0;
      overflow-wrap: anywhere;
    }
    .link {
      border: none;
      background: none;
      color: var(--primary-color);
      text-align: start;
      font: inherit;
      cursor: pointer;
      padding: 2px 0;
    }
    .overview {
      margin: 8px 0;
      padding: 8px 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
    }
    .overview summary {
      cursor: pointer;
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      align-items: center;
    }
    .health {
      font-size: 13px;
      color: var(--secondary-text-color);
    }
    .profiles {
      list-style: none;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .profiles li {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: baseline;
    }
    .editor {
      display: grid;
      gap: 8px;
      margin: 12px 16px;
    }
    .editor label {
      font-size: 14px;
    }
    textarea,
    .editor input {
      font: inherit;
    }
    .add {
      padding: 6px 14px;
      border-radius: 8px;
      border: 1px solid currentColor;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }

    .tabs {
      display: flex;
      gap: 4px;
      flex: 1 0 100%;
    }
    .tabs button {
      padding: 6px 14px;
      border: none;
      border-bottom: 2px solid transparent;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
      opacity: 0.8;
    }
    .tabs button[aria-selected="true"] {
      border-bottom-color: currentColor;
      opacity: 1;
    }
    .row {
      display: flex;
      gap: 8px;
      align-items: stretch;
    }
    .row input[type="checkbox"] {
      width: 20px;
      height: 20px;
      margin: 14px 0 0;
      flex: 0 0 auto;
      accent-color: var(--primary-color);
    }
    .bulk {
      position: sticky;
      top: 0;
      z-index: 1;
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: center;
      padding: 8px 12px;
      border-radius: 12px;
      background: var(--secondary-background-color);
    }
    .bulk button {
      margin: 0;
    }
    .filters input {
      font: inherit;
      font-size: 14px;
      max-width: 150px;
    }
    .day {
      font-size: 14px;
      font-weight: 500;
      color: var(--secondary-text-color);
      margin: 16px 0 8px;
    }
    .state.failed {
      background: var(--error-color);
      color: var(--text-primary-color);
    }
    .state.done {
      background: var(--success-color, #43a047);
      color: var(--text-primary-color);
    }
    .state.waiting {
      background: var(--warning-color, #ffa600);
      color: var(--text-primary-color);
    }
    .messages {
      list-style: none;
      margin: 12px 16px;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .message {
      padding: 8px 10px;
      border-radius: 10px;
      background: var(--secondary-background-color);
      display: grid;
      gap: 2px;
      overflow-wrap: anywhere;
    }
    .message.user {
      background: var(--card-background-color);
      border: 1px solid var(--divider-color);
    }
    .message.tool_result {
      font-size: 12px;
      opacity: 0.8;
    }
    .message.at {
      outline: 2px solid var(--primary-color);
    }
    .message .who {
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .actions button:disabled {
      opacity: 0.6;
      cursor: progress;
    }
`,v=[ye,Y`
    :host {
      min-height: 0;
      background: transparent;
    }
  `];var W=class extends ${constructor(){super(),this._list=new D(this,{key:"conversations",message:()=>this._message(),fail:e=>this._fail(e)}),this._status="",this._open=null,this._busy=!1,this._error=""}t(e,t){return y(this.hass?.locale?.language??this.hass?.language,e,t)}_fail(e){this._error=e?.message??String(e)}firstUpdated(){this._load(!1)}async reload(){await this._list.reread()&&(this._error=""),this._open&&await this._reopen()}_message(){let e={type:"memory/conversations",limit:50};return this._status&&(e.statuses=[this._status]),e}async _load(e){await this._list.load(e)&&(this._error="")}async show(e){try{this._open=await this.hass.callWS({type:"memory/conversation",...e}),this._error="",await this.updateComplete;let t=this.renderRoot.querySelector(".message.at");t?.scrollIntoView({block:"center"}),t?.focus()}catch(t){this._fail(t)}}async _reopen(){let e=this._open.conversation.id;try{let t=await this.hass.callWS({type:"memory/conversation",conversation:e});this._open?.conversation.id===e&&(this._open=t)}catch{this._open?.conversation.id===e&&(this._open=null)}}async _digest(){this._busy=!0;try{await this.hass.callWS({type:"memory/digest_conversation",conversation:this._open.conversation.id}),await this._reopen(),await this._load(!1)}catch(e){this._fail(e)}finally{this._busy=!1}}async _erase(){if(window.confirm(this.t("eraseConversationConfirm")))try{await this.hass.callWS({type:"memory/erase_conversation",conversation:this._open.conversation.id}),this._open=null,await this._load(!1)}catch(e){this._fail(e)}}_openMemory(e){this.dispatchEvent(new CustomEvent("open-memory",{detail:{id:e},bubbles:!0,composed:!0}))}_day(e){return new Date(e).toLocaleDateString(this.hass?.locale?.language??void 0,{weekday:"long",year:"numeric",month:"long",day:"numeric"})}_time(e){return new Date(e).toLocaleTimeString(this.hass?.locale?.language??void 0,{hour:"2-digit",minute:"2-digit"})}_state(e){let t=e.reason,s=t?Ze(`reason_${t}`)?this.t(`reason_${t}`):t:"",i=s?`${this.t(`state_${e.status}`)}: ${s}`:this.t(`state_${e.status}`);return a`<span class="chip state ${e.status}">${i}</span>`}render(){if(!this.hass)return h;let e=[];for(let t of this._list.rows){let s=this._day(t.started_at);(!e.length||e.at(-1).day!==s)&&e.push({day:s,items:[]}),e.at(-1).items.push(t)}return a`
      <div class="filters conversation-filters">
        <label>
          <span>${this.t("digestion")}</span>
          <select
            @change=${t=>{this._status=t.target.value,this._load(!1)}}
          >
            <option value="">${this.t("any")}</option>
            ${["waiting","done","skipped","failed"].map(t=>a`<option value=${t}>${this.t(`state_${t}`)}</option>`)}
          </select>
        </label>
      </div>
      ${this._error?a`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:h}
      <p class="count" aria-live="polite">
        ${this._list.loading&&!this._list.rows.length?this.t("loading"):this._list.rows.length?this.t("conversationsShown",{shown:this._list.rows.length,total:this._list.total}):this.t("noConversations")}
      </p>
      ${e.map(({day:t,items:s})=>a`<h3 class="day">${t}</h3>
          <ul class="list">
            ${s.map(i=>this._row(i))}
          </ul>`)}
      ${this._list.cursor?a`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:h}
      ${this._open?this._detail(this._open):h}
    `}_row(e){return a`<li>
      <button
        class="memory"
        @click=${()=>this.show({conversation:e.id})}
        aria-label=${this.t("conversationLabel",{time:this._time(e.started_at),speaker:e.speaker,preview:e.preview})}
      >
        <span class="content">${e.preview||this.t("noWords")}</span>
        <span class="meta">
          <span>${this._time(e.started_at)}</span>
          <span class="chip ${e.scope==="household"?"house":"person"}">${e.speaker}</span>
          ${e.agent?a`<span>${e.agent}</span>`:h}
          ${e.device?a`<span>${e.device}</span>`:h}
          ${this._state(e)}
          <span>${this.t("messagesCount",{count:e.messages})}</span>
          ${e.produced?a`<span>${this.t("producedCount",{count:e.produced})}</span>`:h}
        </span>
      </button>
    </li>`}_detail({conversation:e,messages:t,memories:s,message_id:i}){let o=(n,c)=>a`<dt>${n}</dt><dd>${c}</dd>`;return a`<section class="detail" role="dialog" aria-label=${this.t("conversation")}>
      <header>
        <h2>${this.t("conversation")}</h2>
        <button @click=${()=>this._open=null} aria-label=${this.t("close")}>✕</button>
      </header>
      <dl>
        ${o(this.t("speaker"),e.speaker)}
        ${e.agent?o(this.t("agent"),e.agent):h}
        ${e.device?o(this.t("device"),e.device):h}
        ${o(this.t("started"),`${this._day(e.started_at)} ${this._time(e.started_at)}`)}
        ${o(this.t("digestion"),this._state(e))}
        ${e.retry_at?o(this.t("retryAt"),`${this._day(e.retry_at)} ${this._time(e.retry_at)}`):h}
      </dl>
      <ol class="messages">
        ${t.map(n=>a`<li
            class="message ${n.role} ${n.id===i?"at":""}"
            tabindex=${n.id===i?"0":"-1"}
            aria-current=${n.id===i?"true":"false"}
          >
            <span class="who">${n.role==="user"?n.speaker:this.t(`role_${n.role}`)}</span>
            <span class="said">${n.content||(n.tool_name?`(${n.tool_name})`:"")}</span>
          </li>`)}
      </ol>
      <h3>${this.t("gave")}</h3>
      ${s.length?a`<ul class="chain">
            ${s.map(n=>a`<li>
                <button class="link" @click=${()=>this._openMemory(n.id)}>#${n.id} ${n.content}</button>
              </li>`)}
          </ul>`:a`<p class="count chain">${this.t("gaveNothing")}</p>`}
      <div class="actions">
        <button @click=${this._digest} ?disabled=${this._busy}>${this._busy?this.t("digesting"):this.t("digestNow")}</button>
        <button class="danger" @click=${this._erase}>${this.t("eraseConversation")}</button>
      </div>
    </section>`}};f(W,"properties",{hass:{attribute:!1},narrow:{type:Boolean},_status:{state:!0},_open:{state:!0},_busy:{state:!0},_error:{state:!0}}),f(W,"styles",v);customElements.get("memory-conversations")||customElements.define("memory-conversations",W);function R(r){return Object.values(r?.states??{}).filter(e=>e.entity_id.startsWith("person.")).map(e=>({id:e.entity_id,name:e.attributes.friendly_name??e.entity_id}))}function ne(r,e,t){return e?new Date(e).toLocaleString(r?.locale?.language??void 0):t}var _t=["assist_memory","markdown","lines","csv","mem0","ha_ai_memory","home_agent"];function gt(r){let e=new Uint8Array(r),t="";for(let s=0;s<e.length;s+=32768)t+=String.fromCharCode(...e.subarray(s,s+32768));return btoa(t)}var B=class extends ${constructor(){super(),this._text="",this._file=null,this._format="",this._source="",this._owners={},this._preview=null,this._done=null,this._busy=!1,this._error="",this._progress=null}t(e,t){return y(this.hass?.locale?.language??this.hass?.language,e,t)}_message(){let e=this._file?{data:this._file.data}:{text:this._text};return this._format&&(e.format=this._format),this._source.trim()&&(e.source=this._source.trim()),Object.keys(this._owners).length&&(e.owners=this._owners),e}async _ask(e){this._busy=!0,this._error="";try{return await this.hass.callWS({type:e,...this._message()})}catch(t){return this._error=t?.message??String(t),null}finally{this._busy=!1}}async _runPreview(){this._preview=await this._ask("memory/import_preview")}async _runImport(){let e;try{e=await this.hass.connection.subscribeMessage(s=>this._progress=s,{type:"memory/import_progress"})}catch{e=void 0}let t;try{t=await this._ask("memory/import")}finally{this._progress=null,e?.()}t&&(this._done=t,this._preview=null,this.dispatchEvent(new CustomEvent("imported",{bubbles:!0,composed:!0})))}async _picked(e){let t=e.target.files?.[0];this._preview=null,this._owners={},this._file=t?{name:t.name,data:gt(await t.arrayBuffer())}:null}_changed(e,t){this[e]=t,this._preview=null}async _own(e,t){this._owners={...this._owners,[e]:t},await this._runPreview()}_close(){this.dispatchEvent(new CustomEvent("close",{bubbles:!0,composed:!0}))}_form(){return a`<label>
        <span>${this.t("importPaste")}</span>
        <textarea
          rows="6"
          .value=${this._text}
          ?disabled=${this._file!==null}
          @input=${e=>this._changed("_text",e.target.value)}
        ></textarea>
      </label>
      <label>
        <span>${this.t("importFile")}</span>
        <input type="file" @change=${this._picked} />
      </label>
      <label>
        <span>${this.t("importFormat")}</span>
        <select @change=${e=>this._changed("_format",e.target.value)}>
          <option value="">${this.t("importDetect")}</option>
          ${_t.map(e=>a`<option value=${e}>${this.t(`format_${e}`)}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("importSource")}</span>
        <input .value=${this._source} @input=${e=>this._changed("_source",e.target.value)} />
      </label>`}_plan(e){let t=(s,i)=>a`<dt>${this.t(s)}</dt><dd>${i}</dd>`;return a`<dl class="import-plan">
        ${t("importFormatFound",this.t(`format_${e.format}`))}
        ${t("importTotal",e.total)} ${t("importNew",e.new)}
        ${t("importDuplicates",e.duplicates)} ${t("importSupersedes",e.supersedes)}
        ${t("importHistory",e.history)} ${t("importSecrets",e.secrets)}
      </dl>
      <h3>${this.t("importOwners")}</h3>
      <ul class="import-owners">
        ${Object.entries(e.owners).map(([s,i])=>a`<li>
            <label>
              <span>${s||this.t("importNoOwner")} (${e.by_scope[i]??0})</span>
              <select
                aria-label=${s||this.t("importNoOwner")}
                @change=${o=>this._own(s,o.target.value)}
              >
                ${[["household",this.t("household")],...R(this.hass).map(o=>[o.id,o.name])].map(([o,n])=>a`<option value=${o} ?selected=${o===i}>${n}</option>`)}
              </select>
            </label>
          </li>`)}
      </ul>`}render(){let e=this._file!==null||this._text.trim()!=="";return a`<section class="detail" role="dialog" aria-label=${this.t("import")}>
      <header>
        <h2>${this.t("import")}</h2>
        <button @click=${this._close} aria-label=${this.t("close")}>✕</button>
      </header>
      ${this._done?a`<p role="status">${this.t("importDone",{count:this._done.imported,duplicates:this._done.duplicates})}</p>`:this._form()}
      ${this._progress?a`<p role="status">
            <progress max=${this._progress.total} .value=${this._progress.done}></progress>
            ${this.t("importProgress",this._progress)}
          </p>`:h}
      ${this._error?a`<p class="error" role="alert">${this._error}</p>`:h}
      ${this._preview?this._plan(this._preview):h}
      <div class="actions">
        ${this._done?a`<button @click=${this._close}>${this.t("close")}</button>`:a`<button ?disabled=${!e||this._busy} @click=${this._runPreview}>
                ${this.t("importPreview")}
              </button>
              <button class="add" ?disabled=${!this._preview||this._busy} @click=${this._runImport}>
                ${this.t("import")}
              </button>
              <button @click=${this._close}>${this.t("cancel")}</button>`}
      </div>
    </section>`}};f(B,"properties",{hass:{attribute:!1},_text:{state:!0},_file:{state:!0},_format:{state:!0},_source:{state:!0},_owners:{state:!0},_preview:{state:!0},_done:{state:!0},_busy:{state:!0},_error:{state:!0},_progress:{state:!0}}),f(B,"styles",v);customElements.get("memory-import-dialog")||customElements.define("memory-import-dialog",B);var ft=["fact","preference","instruction","event","summary","other"],q=class extends ${constructor(){super(),this.memory=null,this._error=""}t(e,t){return y(this.hass?.locale?.language??this.hass?.language,e,t)}_start(){let e=this.memory;return e?{content:e.content,memory_type:e.type,tags:e.tags.join(", "),person:e.household?"household":e.scope,expires_at:e.expires_at?e.expires_at.slice(0,16):""}:{content:"",memory_type:"fact",tags:"",person:"household",expires_at:""}}async _save(e){e.preventDefault();let t=new FormData(e.target),s=String(t.get("tags")??"").split(",").map(c=>c.trim()).filter(Boolean),i=String(t.get("expires_at")??""),o=String(t.get("person")),n={content:String(t.get("content")??""),memory_type:String(t.get("memory_type")),tags:s};try{let c;this.memory?c=(await this.hass.callWS({...n,type:"memory/update",memory_id:this.memory.id,person:o,expires_at:i?new Date(i).toISOString():null})).memory.id:(o!=="household"&&(n.person=o),i&&(n.expires_at=new Date(i).toISOString()),c=(await this.hass.callWS({...n,type:"memory/add"})).id),this._error="",this.dispatchEvent(new CustomEvent("saved",{detail:{id:c},bubbles:!0,composed:!0}))}catch(c){this._error=c?.message??String(c)}}_cancel(){this.dispatchEvent(new CustomEvent("cancel",{bubbles:!0,composed:!0}))}render(){let e=this._start();return a`<form class="editor" @submit=${this._save} aria-label=${this.memory?this.t("edit"):this.t("add")}>
      <label>
        <span>${this.t("text")}</span>
        <textarea name="content" required rows="3" .value=${e.content}></textarea>
      </label>
      <label>
        <span>${this.t("type")}</span>
        <select name="memory_type">
          ${ft.map(t=>a`<option value=${t} ?selected=${t===e.memory_type}>${t}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("tags")}</span>
        <input name="tags" .value=${e.tags} />
      </label>
      <label>
        <span>${this.t("owner")}</span>
        <select name="person">
          <option value="household" ?selected=${e.person==="household"}>${this.t("household")}</option>
          ${R(this.hass).map(t=>a`<option value=${t.id} ?selected=${t.id===e.person}>${t.name}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("expires")}</span>
        <input name="expires_at" type="datetime-local" .value=${e.expires_at} />
      </label>
      ${this._error?a`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:h}
      <div class="actions">
        <button type="submit">${this.t("save")}</button>
        <button type="button" @click=${this._cancel}>${this.t("cancel")}</button>
      </div>
    </form>`}};f(q,"properties",{hass:{attribute:!1},memory:{attribute:!1},_error:{state:!0}}),f(q,"styles",v);customElements.get("memory-editor")||customElements.define("memory-editor",q);var V=class extends ${constructor(){super(),this.detail=null,this.editing=!1}t(e,t){return y(this.hass?.locale?.language??this.hass?.language,e,t)}willUpdate(e){e.has("detail")&&e.get("detail")?.memory.id!==this.detail?.memory.id&&(this.editing=!1)}_tell(e,t={}){this.dispatchEvent(new CustomEvent(e,{detail:t,bubbles:!0,composed:!0}))}async _act(e,t=!1){if(t&&!window.confirm(this.t("purgeConfirm")))return;let s=this.detail.memory.id;try{let i={type:e,memory_ids:[s]};t&&(i.purge=!0),await this.hass.callWS(i),this._tell("changed",{id:s,purged:t})}catch(i){this._tell("failed",{message:i?.message??String(i)})}}_saved(e){e.stopPropagation(),this.editing=!1,this._tell("changed",{id:e.detail.id,purged:!1})}_date(e){return ne(this.hass,e,this.t("never"))}render(){if(!this.detail)return h;let{memory:e,superseded:t,superseded_by:s,has_conversation:i}=this.detail,o=(c,l)=>a`<dt>${c}</dt><dd>${l}</dd>`,n=this.t(`origin_${e.source.origin}`);return a`<section class="detail" role="dialog" aria-modal="false" aria-label=${`#${e.id}`}>
      <header>
        <h2>#${e.id}</h2>
        <button @click=${()=>this._tell("close")} aria-label=${this.t("close")}>✕</button>
      </header>
      ${this.editing?a`<memory-editor
            .hass=${this.hass}
            .memory=${e}
            @saved=${this._saved}
            @cancel=${c=>{c.stopPropagation(),this.editing=!1}}
          ></memory-editor>`:a`<p class="full">${e.content}</p>`}
      <dl>
        ${o(this.t("owner"),e.owner)}
        ${o(this.t("type"),this.t(`type_${e.type}`))}
        ${o(this.t("status"),this.t(e.status))}
        ${o(this.t("tags"),e.tags.join(", ")||"\u2013")}
        ${o(this.t("created"),this._date(e.created_at))}
        ${o(this.t("updated"),this._date(e.updated_at))}
        ${e.expires_at?o(this.t("expires"),this._date(e.expires_at)):h}
        ${o(this.t("recalledTimes"),e.recall_count)}
        ${o(this.t("lastRecalled"),this._date(e.last_recalled_at))}
        ${o(this.t("origin"),i?a`<button class="link" @click=${()=>this._tell("open-conversation",{id:e.id})}>
                ${n} · ${this.t("openConversation")}
              </button>`:n)}
      </dl>
      ${t.length?this._chain(this.t("replaced"),t):h}
      ${s.length?this._chain(this.t("replacedBy"),s):h}
      <div class="actions">
        ${e.status==="active"&&!this.editing?a`<button @click=${()=>this.editing=!0}>${this.t("edit")}</button>`:h}
        ${e.status==="active"?a`<button @click=${()=>this._act("memory/forget")}>${this.t("forget")}</button>`:h}
        ${e.status==="archived"?a`<button @click=${()=>this._act("memory/restore")}>${this.t("restore")}</button>`:h}
        <button class="danger" @click=${()=>this._act("memory/forget",!0)}>${this.t("purge")}</button>
      </div>
    </section>`}_chain(e,t){return a`<h3>${e}</h3>
      <ol class="chain">
        ${t.map(s=>a`<li><button class="link" @click=${()=>this._tell("show",{id:s.id})}>
              #${s.id} ${s.content}
            </button></li>`)}
      </ol>`}};f(V,"properties",{hass:{attribute:!1},detail:{attribute:!1},editing:{state:!0}}),f(V,"styles",v);customElements.get("memory-detail")||customElements.define("memory-detail",V);var $t=250,yt=["fact","preference","instruction","event","summary","profile","other"],vt=["tool","digestion","action","import"],ae=class{constructor(e,{changed:t}){this.host=e,this.changed=t,this.query="",this.person="",this.status="active",this.order="newest",this.type="",this.tag="",this.origin="",this.since="",this.until="",this.open=!1,this._typing=void 0,e.addController(this)}t(e,t){return this.host.t(e,t)}message(){let e={type:"memory/browse",status:this.status,limit:50,order:this.query.trim()?"relevance":this.order};if(this.query.trim()&&(e.query=this.query.trim()),this.person&&(e.person=this.person),this.type&&(e.types=[this.type]),this.tag.trim()&&(e.tags=[this.tag.trim()]),this.origin&&(e.origins=[this.origin]),this.since&&(e.since=new Date(`${this.since}T00:00`).toISOString()),this.until){let t=new Date(`${this.until}T00:00`);t.setDate(t.getDate()+1),e.until=t.toISOString()}return e}_typed(e){this.query=e.target.value,this.host.requestUpdate(),clearTimeout(this._typing),this._typing=setTimeout(()=>this.changed(),$t)}_chose(e,t){this[e]=t.target.value,this.host.requestUpdate(),this.changed()}_toggleOpen(){this.open=!this.open,this.host.requestUpdate()}_active(){return[this.person,this.type,this.origin,this.tag.trim(),this.since,this.until].filter(Boolean).length+(this.status==="active"?0:1)}_select(e,t,s,i=e){return a`<label>
      <span>${e}</span>
      <select @change=${o=>this._chose(t,o)} aria-label=${i}>
        ${s.map(([o,n])=>a`<option value=${o} ?selected=${o===this[t]}>${n}</option>`)}
      </select>
    </label>`}render(e){return a`<input
        type="search"
        .value=${this.query}
        @input=${t=>this._typed(t)}
        placeholder=${this.t("searchHint")}
        aria-label=${this.t("search")}
      />
      ${e?a`<button class="add" aria-expanded=${this.open?"true":"false"} @click=${()=>this._toggleOpen()}>
            ${this.t("filters",{count:this._active()})}
          </button>`:h}
      <div class="filters" ?hidden=${e&&!this.open}>
        ${this._select(this.t("owner"),"person",[["",this.t("everyone")],["household",this.t("household")],...R(this.host.hass).map(t=>[t.id,t.name])])}
        ${this._select(this.t("type"),"type",[["",this.t("any")],...yt.map(t=>[t,this.t(`type_${t}`)])])}
        ${this._select(this.t("status"),"status",["active","expiring","archived","superseded","any"].map(t=>[t,this.t(t)]))}
        ${this._select(this.t("origin"),"origin",[["",this.t("any")],...vt.map(t=>[t,this.t(`origin_${t}`)])])}
        <label>
          <span>${this.t("tag")}</span>
          <input
            .value=${this.tag}
            @change=${t=>this._chose("tag",t)}
            aria-label=${this.t("tag")}
            placeholder=${this.t("tagHint")}
          />
        </label>
        <label>
          <span>${this.t("from")}</span>
          <input type="date" .value=${this.since} @change=${t=>this._chose("since",t)} aria-label=${this.t("from")} />
        </label>
        <label>
          <span>${this.t("to")}</span>
          <input type="date" .value=${this.until} @change=${t=>this._chose("until",t)} aria-label=${this.t("to")} />
        </label>
        <label>
          <span>${this.t("order")}</span>
          <select @change=${t=>this._chose("order",t)} aria-label=${this.t("order")} ?disabled=${!!this.query.trim()}>
            ${["newest","recalled"].map(t=>a`<option value=${t} ?selected=${t===this.order}>${this.t(t)}</option>`)}
          </select>
        </label>
      </div>`}};var j=class extends ${constructor(){super(),this._overview=null}t(e,t){return y(this.hass?.locale?.language??this.hass?.language,e,t)}firstUpdated(){this._loadOverview()}reload(){this._loadOverview()}async _loadOverview(){try{this._overview=await this.hass.callWS({type:"memory/overview"})}catch(e){this.dispatchEvent(new CustomEvent("failed",{detail:e,bubbles:!0,composed:!0}))}}async _refreshProfile(e){try{await this.hass.callWS({type:"memory/refresh_profile",person:e.household?"household":e.scope}),await this._loadOverview()}catch(t){this.dispatchEvent(new CustomEvent("failed",{detail:t,bubbles:!0,composed:!0}))}}render(){let e=this._overview;if(!e)return h;let{counts:t,health:s,profiles:i}=e,o=(s.database_bytes/1048576).toFixed(1);return a`<details class="overview">
      <summary>
        ${this.t("overview")}:
        ${["active","expiring","archived","superseded"].map(n=>a`<span class="chip">${this.t(n)} ${t[n]}</span>`)}
      </summary>
      <p class="health">
        ${this.t("health",{size:o,search:s.model??this.t("keywordOnly"),waiting:s.digestion_waiting,calls:s.ai_task_calls_last_hour,cap:s.ai_task_max_calls_per_hour})}
        ${s.embedding?a`<br />${this.t("embedding",{provider:s.embedding.provider,model:s.embedding.model,progress:Math.round(s.embedding.progress),pending:s.embedding.pending,state:this.t(s.embedding.connected?"connected":"unreachable")})}`:h}
      </p>
      <h3>${this.t("profiles")}</h3>
      ${i.length?a`<ul class="profiles">
            ${i.map(n=>a`<li>
                <span class="chip ${n.household?"house":"person"}">${n.owner}</span>
                <span class="content">${n.content}</span>
                <button class="link" @click=${()=>this._refreshProfile(n)}>
                  ${this.t("refresh")}
                </button>
              </li>`)}
          </ul>`:a`<p class="count">${this.t("noProfiles")}</p>`}
    </details>`}};f(j,"properties",{hass:{attribute:!1},_overview:{state:!0}}),f(j,"styles",v);customElements.get("memory-overview")||customElements.define("memory-overview",j);var F=class extends ${constructor(){super(),this._filters=new ae(this,{changed:()=>this._load(!1)}),this._list=new D(this,{key:"memories",message:()=>this._filters.message(),fail:e=>this._fail(e)}),this._open=null,this._error="",this._adding=!1,this._view="memories",this._selected=new Set,this._notice="",this._unsubscribe=void 0}_fail(e){this._error=e?.message??String(e)}t(e,t){return y(this.hass?.locale?.language??this.hass?.language,e,t)}connectedCallback(){super.connectedCallback(),this.hass&&this._start()}disconnectedCallback(){super.disconnectedCallback(),this._unsubscribe?.then(e=>e()).catch(()=>{}),this._unsubscribe=void 0}updated(e){e.has("hass")&&this.hass&&!this._unsubscribe&&this._start()}_start(){this._unsubscribe=this.hass.connection.subscribeMessage(()=>{this._refresh(),this.renderRoot.querySelector("memory-overview")?.reload(),this.renderRoot.querySelector("memory-conversations")?.reload()},{type:"memory/subscribe"}),this._load(!1)}async _load(e){await this._list.load(e)&&(this._error="",e||this._keepSelection())}async _refresh(){await this._list.reread()&&(this._keepSelection(),this._error=""),this._open&&!this.renderRoot.querySelector("memory-detail")?.editing&&await this._reopen()}_keepSelection(){let{kept:e,dropped:t}=Je(this._selected,this._list.rows);t&&(this._selected=e,this._notice=this.t("selectionDropped",{count:t}))}async _reopen(){let e=this._open.memory.id;try{let t=await this.hass.callWS({type:"memory/get",memory_id:e});this._open?.memory.id===e&&(this._open=t)}catch(t){if(this._open?.memory.id!==e)return;this._open=null,this._notice=this.t("openGone",{id:e,error:t?.message??String(t)})}}_menu(){this.dispatchEvent(new Event("hass-toggle-menu",{bubbles:!0,composed:!0}))}async _show(e){try{this._open=await this.hass.callWS({type:"memory/get",memory_id:e}),this._error=""}catch(t){this._fail(t)}}async _changed(e){let{id:t,purged:s}=e.detail;s?this._open=null:await this._show(t),await this._load(!1)}async _added(e){this._adding=!1,await this._show(e.detail.id),await this._load(!1)}async _actOnSelected(e,t=!1){let s=[...this._selected];if(s.length&&!(t&&!window.confirm(this.t("purgeManyConfirm",{count:s.length}))))try{let i={type:e,memory_ids:s};t&&(i.purge=!0),await this.hass.callWS(i),this._selected=new Set,this._notice="",this._open&&s.includes(this._open.memory.id)&&(this._open=null),await this._load(!1)}catch(i){this._fail(i)}}_toggle(e,t){let s=new Set(this._selected);t.target.checked?s.add(e):s.delete(e),this._selected=s,this._notice=""}async _openConversation(e){this._open=null,this._view="conversations",await this.updateComplete,await this.renderRoot.querySelector("memory-conversations")?.show({memory_id:e})}_openMemory(e){this._view="memories",this._show(e.detail.id)}_date(e){return ne(this.hass,e,this.t("never"))}render(){if(!this.hass)return h;let e=this._view==="memories";return a`
      <header class=${this.narrow?"narrow":""}>
        ${this.narrow?a`<button class="menu" @click=${this._menu} aria-label=${this.t("menu")}>☰</button>`:h}
        <h1>${this.t("title")}</h1>
        <button class="add" @click=${()=>this._adding=!0}>${this.t("add")}</button>
        <button class="add" @click=${()=>this._importing=!0}>${this.t("import")}</button>
        <div class="tabs" role="tablist">
          ${["memories","conversations"].map(t=>a`<button
              role="tab"
              aria-selected=${this._view===t?"true":"false"}
              @click=${()=>this._view=t}
            >
              ${this.t(t)}
            </button>`)}
        </div>
        ${e?this._filters.render(this.narrow):h}
      </header>
      ${this._error?a`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:h}
      <main>
        <memory-overview .hass=${this.hass} @failed=${t=>this._fail(t.detail)}></memory-overview>
        ${e?this._memoryList():a`<memory-conversations
              .hass=${this.hass}
              .narrow=${this.narrow}
              @open-memory=${this._openMemory}
            ></memory-conversations>`}
      </main>
      ${this._open?a`<memory-detail
            .hass=${this.hass}
            .detail=${this._open}
            @close=${()=>this._open=null}
            @changed=${this._changed}
            @show=${t=>this._show(t.detail.id)}
            @open-conversation=${t=>this._openConversation(t.detail.id)}
            @failed=${t=>this._fail(t.detail)}
          ></memory-detail>`:h}
      ${this._adding?a`<section class="detail" role="dialog" aria-label=${this.t("add")}>
            <header><h2>${this.t("add")}</h2></header>
            <memory-editor
              .hass=${this.hass}
              @saved=${this._added}
              @cancel=${()=>this._adding=!1}
            ></memory-editor>
          </section>`:h}
      ${this._importing?a`<memory-import-dialog
            .hass=${this.hass}
            @close=${()=>this._importing=!1}
          ></memory-import-dialog>`:h}
    `}_memoryList(){let e=this._selected.size;return a`
      ${e?a`<div class="bulk" role="toolbar" aria-label=${this.t("selected",{count:e})}>
            <span>${this.t("selected",{count:e})}</span>
            <button class="more" @click=${()=>this._actOnSelected("memory/forget")}>${this.t("forget")}</button>
            <button class="more" @click=${()=>this._actOnSelected("memory/restore")}>${this.t("restore")}</button>
            <button class="more danger" @click=${()=>this._actOnSelected("memory/forget",!0)}>
              ${this.t("purge")}
            </button>
            <button class="link" @click=${()=>this._selected=new Set}>${this.t("clearSelection")}</button>
          </div>`:h}
      ${this._notice?a`<p class="notice" role="status">${this._notice}</p>`:h}
      <p class="count" aria-live="polite">
        ${this._list.loading&&!this._list.rows.length?this.t("loading"):this._list.rows.length?this.t("shown",{shown:this._list.rows.length,total:this._list.total}):this.t("none")}
      </p>
      <ul class="list">
        ${Ke(this._list.rows,t=>t.id,t=>this._row(t))}
      </ul>
      ${this._list.cursor?a`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:h}
    `}_row(e){return a`<li class="row">
      <input
        type="checkbox"
        .checked=${this._selected.has(e.id)}
        @change=${t=>this._toggle(e.id,t)}
        aria-label=${this.t("select",{id:e.id})}
      />
      <button
        class="memory ${e.status}"
        @click=${()=>this._show(e.id)}
        aria-label=${`#${e.id}: ${e.content}`}
      >
        <span class="content">${e.content}</span>
        <span class="meta">
          <span class="chip ${e.household?"house":"person"}">${e.owner}</span>
          <span>${this.t(`type_${e.type}`)}</span>
          <span>${this._date(e.created_at)}</span>
          ${e.tags.map(t=>a`<span class="chip">#${t}</span>`)}
          ${e.status!=="active"?a`<span class="chip">${this.t(e.status)}</span>`:h}
        </span>
      </button>
    </li>`}};f(F,"properties",{hass:{attribute:!1},narrow:{type:Boolean},panel:{attribute:!1},_open:{state:!0},_error:{state:!0},_adding:{state:!0},_view:{state:!0},_selected:{state:!0},_notice:{state:!0},_importing:{state:!0}}),f(F,"styles",ye);customElements.get("memory-panel")||customElements.define("memory-panel",F);export{F as MemoryPanel};
/*! Bundled license information:

@lit/reactive-element/css-tag.js:
  (**
   * @license
   * Copyright 2019 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

@lit/reactive-element/reactive-element.js:
lit-html/lit-html.js:
lit-element/lit-element.js:
lit-html/directive.js:
lit-html/directives/repeat.js:
  (**
   * @license
   * Copyright 2017 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

lit-html/is-server.js:
  (**
   * @license
   * Copyright 2022 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

lit-html/directive-helpers.js:
  (**
   * @license
   * Copyright 2020 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)
*/
